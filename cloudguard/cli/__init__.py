"""The `cloudguard` command: parses, wires, prints. The work lives in the modules it calls.

Exit codes (a contract, see docs/reference.md):
0 clean · 1 audit found orphans / a reap action failed · 2 usage · 75 did not run ·
97 refused admission (bad registry/config, log not armed or malformed) ·
98 a cloud reach was refused and recorded, or a write where the run must not write.
"""

from __future__ import annotations

from typing import Annotated

import typer

from cloudguard import exit_codes
from cloudguard.cli import guard, presentation, trust

EXIT_CODES_HELP = (
    "Exit codes: 0 clean; 1 orphans found (audit) or an action failed (reap); 2 usage; "
    "75 did not run; "
    "97 refused admission (invalid registry or config, reach log not armed or malformed); "
    "98 a cloud reach was refused and recorded, or a write where the run must not write."
)

app = typer.Typer(
    name="cloudguard",
    help="Keep test suites from reaching real clouds; find the resources they leaked.\n\n"
    + EXIT_CODES_HELP,
    no_args_is_help=True,
    # -h as well as --help; subcommands inherit it from this context.
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
)

# The distribution's name: "cloudguard" on the package index is another project.
DISTRIBUTION = "cloudguard-ci"


def _print_version(value: bool) -> None:
    if value:
        from cloudguard import __version__

        typer.echo(f"{DISTRIBUTION} {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            callback=_print_version,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Keep test suites from reaching real clouds; find the resources they leaked."""


# Plain-text help, whole option names, one-line usage errors (cloudguard.cli.presentation).
presentation.apply()


# run, check, doctor: the guard's commands (their bodies and help: cloudguard.cli.guard).
guard.register(app)


@app.command(
    help="Run the embedded demo: a fake Azure fleet audited over HTTPS, then a sealed run."
)
def demo(
    serve: Annotated[
        bool,
        typer.Option(
            "--serve",
            help="Leave the fake fleet running on 127.0.0.1 until Ctrl-C, and print the exact "
            "audit and reap commands to try against it.",
        ),
    ] = False,
) -> None:
    from importlib.metadata import entry_points

    # An adapter ships its demo under the `cloudguard.demos` entry-point group: the core
    # names no adapter. The first by name runs (only the Azure adapter ships one today).
    demos = sorted(entry_points(group="cloudguard.demos"), key=lambda ep: ep.name)
    try:
        demo_main = demos[0].load()
    except (IndexError, ImportError):
        typer.echo(
            "cloudguard: the demo needs the Azure adapter: pip install 'cloudguard-ci[azure]' "
            "'cloudguard-azure[fake]' (its fake ARM; from a checkout: pip install ./ "
            "'./adapters/azure[fake]')",
            err=True,
        )
        raise typer.Exit(exit_codes.DID_NOT_RUN) from None
    raise typer.Exit(demo_main(serve=True) if serve else demo_main())


def _register_trust() -> None:
    trust.register(app)  # after audit and reap in --help: it configures them


def _register_setup() -> None:
    from cloudguard.cli import adapters, init

    init.register(app)  # a project's first file
    adapters.register(app)  # what sweeps and reaps which cloud


def _register_audit() -> None:
    from cloudguard.cli.audit import register_audit

    register_audit(app)  # its docstring is the help: it lists the audit's exit codes


def _register_reap() -> None:
    from cloudguard.cli.reap import app as reap_app

    app.add_typer(reap_app, name="reap")  # `reap plan`, `reap apply`; each lists its exit codes


def _register_history() -> None:
    from cloudguard.cli.history import register

    register(app)  # `history runs|resource|cost|offenders|acks`, `ack`


def main() -> None:
    presentation.reader_may_leave()  # `cloudguard audit | head -1` is not an error
    _register_audit()
    _register_reap()
    _register_trust()
    _register_history()
    _register_setup()
    app()


if __name__ == "__main__":
    main()

"""The `cloudguard` command: parses, wires, prints. The work lives in the modules it calls.

Exit codes (a contract, see docs/reference.md):
0 clean · 1 audit found orphans / a reap action failed · 2 usage · 75 did not run ·
97 refused admission (bad registry/config, log not armed or malformed) ·
98 a cloud reach was refused and recorded.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cloudguard import exit_codes, trust_command
from cloudguard.guard import command as guard_command

EXIT_CODES_HELP = (
    "Exit codes: 0 clean; 1 orphans found (audit) or an action failed (reap); 2 usage; "
    "75 did not run; "
    "97 refused admission (invalid registry or config, reach log not armed or malformed); "
    "98 a cloud reach was refused and recorded."
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


def _no_type_labels_where_they_mislead() -> None:
    # Typer labels every parameter with its Python type: flags too ("--help
    # <bool>", though a flag takes no value) and arguments beside their own
    # metavar ("CMD <list[str]>"). Show the metavar alone, and nothing for a flag.
    from typer.core import TyperArgument, TyperOption

    option_type = TyperOption.display_type_rich

    def option_display(self: TyperOption, ctx: Any) -> str | None:
        return None if self.is_flag and self.metavar is None else option_type(self, ctx)

    def argument_display(self: TyperArgument, ctx: Any) -> str | None:
        return None

    TyperOption.display_type_rich = option_display  # type: ignore[method-assign]
    TyperArgument.display_type_rich = argument_display  # type: ignore[method-assign,assignment]


_no_type_labels_where_they_mislead()


# run, check, doctor: the guard's commands (their bodies and help: cloudguard.guard.command).
guard_command.register(app)


@app.command(
    help="Run the embedded demo: a fake Azure fleet audited over HTTPS, then a sealed run."
)
def demo() -> None:
    from importlib.metadata import entry_points

    # An adapter ships its demo under the `cloudguard.demos` entry-point group: the core
    # names no adapter. The first by name runs (only the Azure adapter ships one today).
    demos = sorted(entry_points(group="cloudguard.demos"), key=lambda ep: ep.name)
    try:
        demo_main = demos[0].load()
    except (IndexError, ImportError):
        typer.echo(
            "cloudguard: the demo needs the Azure adapter: pip install 'cloudguard-ci[azure]' "
            "'cloudguard-azure[fake]' (its fake ARM)",
            err=True,
        )
        raise typer.Exit(exit_codes.DID_NOT_RUN) from None
    raise typer.Exit(demo_main())


def _register_trust() -> None:
    trust_command.register(app)  # after audit and reap in --help: it configures them


def _register_audit() -> None:
    from cloudguard.audit.command import register_audit

    register_audit(app)  # its docstring is the help: it lists the audit's exit codes


def _register_reap() -> None:
    from cloudguard.reap.command import app as reap_app

    app.add_typer(reap_app, name="reap")  # `reap plan`, `reap apply`; each lists its exit codes


def _register_history() -> None:
    from cloudguard.audit.history_command import register

    register(app)  # `history runs|resource|cost|offenders|acks`, `ack`


def main() -> None:
    _register_audit()
    _register_reap()
    _register_trust()
    _register_history()
    app()


if __name__ == "__main__":
    main()

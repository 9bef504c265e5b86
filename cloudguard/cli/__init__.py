"""The `cloudguard` command: parses, wires, prints. The work lives in the modules it calls.

The only layer that knows typer, one module per command group, each parsing
and printing only; nothing imports it (the entry point is `main` here):

- `guard`: `run`, `check`, `doctor`;
- `audit`: `audit`;
- `history`: `history runs|resource|cost|offenders|acks`, `ack`;
- `reap`: `reap plan`, `reap apply`;
- `trust`: `trust [FILE]`, `--list`, `--revoke`;
- `init`: `init`, a project's first cloudguard.toml;
- `adapters`: `adapters`, what sweeps and reaps which cloud;
- `demo`: `demo [--serve]`, the demo an adapter ships;
- `presentation`: how the command presents itself (plain help, one-line usage
  errors, a reader that leaves);
- `lean_coercion`: typer's coercion of a value built only when the value needs it
  (an audit's start-up loads no pydantic).

Exit codes (a contract, see docs/reference.md):
0 clean · 1 audit found orphans / a reap action failed · 2 usage · 75 did not run ·
97 refused admission (bad registry/config, log not armed or malformed) ·
98 a cloud reach was refused and recorded, or a write where the run must not write.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from cloudguard.cli import demo, guard, lean_coercion, presentation, trust

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

# Typer's pydantic coercion built only for a value that needs it (cloudguard.cli.lean_coercion).
lean_coercion.apply()


# run, check, doctor: the guard's commands (their bodies and help: cloudguard.cli.guard).
guard.register(app)


# `demo`: the adapter's embedded demo (cloudguard.cli.demo).
demo.register(app)


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


# In --help order; the guard's commands and `demo` come with the app.
_REGISTER_ALL = (_register_audit, _register_reap, _register_trust, _register_history,
                 _register_setup)  # fmt: skip
_REGISTERS = {
    "audit": _register_audit,
    "reap": _register_reap,
    "trust": _register_trust,
    "history": _register_history,
    "ack": _register_history,
    "init": _register_setup,
    "adapters": _register_setup,
}


def main() -> None:
    presentation.reader_may_leave()  # `cloudguard audit | head -1` is not an error
    # The command a command line names is the one registered: a nightly audit pays
    # for no other command's imports (issue 34). Anything else (no command, --help,
    # a name click would suggest a command for) gets every one, as --help lists them.
    named = _REGISTERS.get(sys.argv[1]) if len(sys.argv) > 1 else None
    for register in (named,) if named is not None else _REGISTER_ALL:
        register()
    app()


if __name__ == "__main__":
    main()

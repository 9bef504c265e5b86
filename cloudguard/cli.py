"""The `cloudguard` command: parses, wires, prints. The work lives in the modules it calls.

Exit codes (a contract, see docs/reference.md):
0 clean · 1 audit found orphans / a reap action failed · 2 usage · 75 did not run ·
97 refused admission (bad registry/config, log not armed or malformed) ·
98 a cloud reach was refused and recorded.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cloudguard import exit_codes

if TYPE_CHECKING:
    from cloudguard.guard.seal import Registry

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


RegistryOption = Annotated[
    Path | None,
    typer.Option(
        "--registry",
        "-r",
        metavar="FILE",
        help="Project seal registry (default: the nearest cloudguard.toml).",
        dir_okay=False,
    ),
]


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


def _registry(path: Path | None) -> Registry:
    from cloudguard.guard.seal import RegistryError, load_registry

    try:
        return load_registry(path, search_from=Path.cwd())
    except RegistryError as error:
        typer.echo(f"cloudguard: refused admission: {error}", err=True)
        raise typer.Exit(exit_codes.REFUSED_ADMISSION) from None


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    options_metavar="[OPTIONS] --",
    help="Run CMD sealed, then check the reach log. Exit: CMD's own code when nothing "
    "reached; 98 when anything did; 97 when the log cannot be armed or read; "
    "127/126 when CMD cannot be started.",
)
def run(
    command: Annotated[
        list[str] | None,
        typer.Argument(help="The command and its arguments, after --.", metavar="CMD"),
    ] = None,
    log: Annotated[
        str | None,
        typer.Option(
            "--log",
            "-l",
            metavar="PATH",
            help="Reach log to arm (default: a temporary one, kept when red).",
        ),
    ] = None,
    registry: RegistryOption = None,
    hard: Annotated[
        bool,
        typer.Option(
            "--hard",
            help="Run CMD in new user, network and mount namespaces whose only way out is "
            "cloudguard's recording sink (Linux). 75 when they cannot be made here.",
        ),
    ] = False,
    forward: Annotated[
        list[int] | None,
        typer.Option(
            "--forward",
            help="With --hard: make the host's 127.0.0.1:PORT reachable inside (repeatable; "
            "also [hard] forward in cloudguard.toml).",
            min=1,
            max=65535,
            metavar="PORT",
        ),
    ] = None,
) -> None:
    from cloudguard.guard import runner

    if not command:
        raise typer.BadParameter("give the command to run after --", param_hint="CMD")
    if forward and not hard:
        typer.echo("cloudguard: --forward needs --hard", err=True)
        raise typer.Exit(exit_codes.USAGE)
    raise typer.Exit(
        runner.run(command, registry=_registry(registry), log=log, hard=hard, forward=forward or ())
    )


@app.command(
    help="Check a reach log: 0 armed and clean; 98 any reach (each printed); "
    "97 not armed, malformed or torn."
)
def check(
    log: Annotated[
        str | None,
        typer.Option(
            "--log",
            "-l",
            metavar="PATH",
            help=f"The reach log (default: ${'CLOUDGUARD_REACH_LOG'}).",
        ),
    ] = None,
    since: Annotated[
        int, typer.Option("--since", metavar="BYTES", help="Byte offset to check from.", min=0)
    ] = 0,
) -> None:
    from cloudguard.escape import one_line
    from cloudguard.guard import reach, runner

    path = log or os.environ.get(reach.LOG_VARIABLE)
    if not path:
        typer.echo(f"cloudguard: no reach log: pass --log or set {reach.LOG_VARIABLE}", err=True)
        raise typer.Exit(exit_codes.REFUSED_ADMISSION)
    verdict = runner.check(runner.ArmedLog(path, since, owned=False), sys.stderr)
    if verdict == exit_codes.CLEAN:
        typer.echo(f"cloudguard: {one_line(path, 2000)} is armed and clean", err=True)
    raise typer.Exit(verdict)


@app.command(help="Assert that the seal holds in this process; 97 with each reason otherwise.")
def doctor(registry: RegistryOption = None) -> None:
    from cloudguard.escape import one_line
    from cloudguard.guard.doctor import problems
    from cloudguard.guard.hard.requirements import missing

    found = list(problems(os.environ, _registry(registry)))
    unavailable = missing()
    hard_mode = f"not available here: {unavailable}" if unavailable else "available here"
    typer.echo(f"cloudguard doctor: hard seal (run --hard) {hard_mode}", err=True)
    for problem in found:  # they quote environment values: escaped for the terminal
        typer.echo(f"cloudguard doctor: {one_line(problem, 2000)}", err=True)
    if found:
        raise typer.Exit(exit_codes.REFUSED_ADMISSION)
    typer.echo("cloudguard doctor: the seal holds", err=True)


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


def _register_audit() -> None:
    from cloudguard.audit.command import register_audit

    register_audit(app)  # its docstring is the help: it lists the audit's exit codes


def _register_reap() -> None:
    from cloudguard.reap.command import app as reap_app

    app.add_typer(reap_app, name="reap")  # `reap plan`, `reap apply`; each lists its exit codes


def main() -> None:
    _register_audit()
    _register_reap()
    app()


if __name__ == "__main__":
    main()

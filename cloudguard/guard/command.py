"""`cloudguard run`, `check` and `doctor`: parse their options, call the guard, exit with its code.

Thin on purpose, as `audit/command.py` and `reap/command.py` are: the work
lives in `runner`, `alarm` and `doctor`. `register` adds the three commands
to the `cloudguard` app (cli.py), in the order `--help` lists them. Heavy
imports stay inside the commands: `cloudguard --version` pays for none.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cloudguard import exit_codes

if TYPE_CHECKING:
    from cloudguard.guard.registry import Registry

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


def register(app: typer.Typer) -> None:
    """Add `run`, `check` and `doctor` to `app`, with their help (and exit codes)."""
    app.command(
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        options_metavar="[OPTIONS] --",
        help="Run CMD sealed, then check the reach log. Exit: CMD's own code when nothing "
        "reached and nothing was written where it must not be; 98 when anything was; "
        "97 when the log cannot be armed or read; 127/126 when CMD cannot be started.",
    )(run)
    app.command(
        help="Check a reach log: 0 armed and clean; 98 any reach (each printed); "
        "97 not armed, malformed or torn."
    )(check)
    app.command(help="Assert that the seal holds in this process; 97 with each reason otherwise.")(
        doctor
    )


def _registry(path: Path | None) -> Registry:
    from cloudguard.guard.registry import RegistryError, load_registry

    try:
        return load_registry(path, search_from=Path.cwd())
    except RegistryError as error:
        typer.echo(f"cloudguard: refused admission: {error}", err=True)
        raise typer.Exit(exit_codes.REFUSED_ADMISSION) from None


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
    allow_unix: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-unix",
            help="With --hard: let CMD connect to this host unix socket (repeatable; shown on "
            "the seal line). Every other host socket is masked or refused and recorded.",
            metavar="PATH",
        ),
    ] = None,
) -> None:
    from cloudguard.guard import runner

    if not command:
        raise typer.BadParameter("give the command to run after --", param_hint="CMD")
    for flag, given in (("--forward", forward), ("--allow-unix", allow_unix)):
        if given and not hard:
            typer.echo(f"cloudguard: {flag} needs --hard", err=True)
            raise typer.Exit(exit_codes.USAGE)
    rules = _registry(registry)
    for ignored in rules.ignored_forward if hard else ():  # untrusted keys only --hard would use
        typer.echo(f"cloudguard: {ignored}", err=True)
    raise typer.Exit(
        runner.run(
            command,
            registry=rules,
            log=log,
            hard=hard,
            forward=forward or (),
            allow_unix=allow_unix or (),
        )
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
    from cloudguard.guard import alarm, reach

    path = log or os.environ.get(reach.LOG_VARIABLE)
    if not path:
        typer.echo(f"cloudguard: no reach log: pass --log or set {reach.LOG_VARIABLE}", err=True)
        raise typer.Exit(exit_codes.REFUSED_ADMISSION)
    verdict = alarm.check(path, since, sys.stderr)
    if verdict == exit_codes.CLEAN:
        typer.echo(f"cloudguard: {one_line(path, 2000)} is armed and clean", err=True)
    raise typer.Exit(verdict)


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

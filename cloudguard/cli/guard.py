"""`cloudguard run`, `check` and `doctor`: parse their options, call the guard, exit with its code.

Thin on purpose, as `cli/audit.py` and `cli/reap.py` are: the work
lives in the guard's `runner`, `alarm` and `doctor`. `register` adds the three commands
to the `cloudguard` app (cli/__init__.py), in the order `--help` lists them. Heavy
imports stay inside the commands: `cloudguard --version` pays for none.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from cloudguard import exit_codes

if TYPE_CHECKING:
    from cloudguard.guard.report import ReachReport
    from cloudguard.guard.seal_registry import Registry

ReportOption = Annotated[
    list[str] | None,
    typer.Option(
        "--report",
        metavar="FORMAT=FILE",
        help="Also write the findings as FORMAT to FILE (repeatable): json, junit, markdown "
        "(a CI job summary), sarif (code scanning, at each test's file and line).",
    ),
]
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
        "97 not armed, malformed, torn or shorter than --since; 2 no log named."
    )(check)
    app.command(help="Assert that the seal holds in this process; 97 with each reason otherwise.")(
        doctor
    )


def _registry(path: Path | None) -> Registry:
    from cloudguard.guard.seal_registry import RegistryError, load_registry

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
    report: ReportOption = None,
) -> None:
    from cloudguard.guard import runner

    _reader_may_leave()
    if not command:
        raise typer.BadParameter("give the command to run after --", param_hint="CMD")
    if command[0].startswith("-"):  # an option typed before `--` that run does not know
        _usage(f"no such option: {command[0]} (the command to run goes after --)")
    for flag, given in (("--forward", forward), ("--allow-unix", allow_unix)):
        if given and not hard:
            _usage(f"{flag} needs --hard")
    reports = _reports(report)
    rules = _registry(registry)
    for ignored in rules.ignored_forward if hard else ():  # untrusted keys only --hard would use
        typer.echo(f"cloudguard: {ignored}", err=True)
    raise typer.Exit(
        runner.run(
            command,
            registry=rules,
            log=_log_path(log),
            err=sys.stderr,
            hard=hard,
            forward=forward or (),
            allow_unix=allow_unix or (),
            reports=reports,
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
        int,
        typer.Option(
            "--since",
            metavar="BYTES",
            help="Byte offset to check from: where an earlier check or run ended, at the start "
            "of a line (past the end: 97, the log shrank).",
            min=0,
        ),
    ] = 0,
    report: ReportOption = None,
) -> None:
    from cloudguard.documents.reach_log import OffsetError, ReachLogError
    from cloudguard.escape import one_line
    from cloudguard.guard import alarm, reach
    from cloudguard.guard.report import ReachReport

    _reader_may_leave()
    reports = _reports(report)
    path = _log_path(log) or os.environ.get(reach.LOG_VARIABLE)
    if not path:
        _usage(f"no reach log: pass --log PATH or set {reach.LOG_VARIABLE}")
    problems: list[str] = []
    try:
        records = alarm.read_records(path, since)
    except OffsetError as error:
        _usage(str(error))
    except ReachLogError as error:
        typer.echo(alarm.unreadable(error), err=True)
        records, problems = (), [str(error)]
        verdict = exit_codes.REFUSED_ADMISSION
    else:
        verdict = alarm.judge(records, path, sys.stderr)
    if verdict == exit_codes.CLEAN:
        typer.echo(f"cloudguard: {one_line(path, 2000)} is armed and clean", err=True)
    found = ReachReport.of("cloudguard check", path, verdict, records, problems)
    raise typer.Exit(_write_reports(reports, found))


def doctor(
    registry: RegistryOption = None,
    python: Annotated[
        Path | None,
        typer.Option(
            "--python",
            metavar="PATH",
            help="Outside a sealed run: the Python the project's tests run with (default: this "
            "one), asked whether the pytest plugin would load there.",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
) -> None:
    from cloudguard.escape import one_line
    from cloudguard.guard import doctor as checks
    from cloudguard.guard import reach, seal
    from cloudguard.guard.hard.requirements import GATE_LIMITS, gate_missing, missing

    _reader_may_leave()
    rules = _registry(registry)  # an invalid registry is 97, sealed or not
    sealed = os.environ.get(reach.LOG_VARIABLE) or os.environ.get(seal.SEAL_DIR_VARIABLE)
    unavailable = missing()
    hard_mode = f"not available here: {unavailable}" if unavailable else "available here"
    if not unavailable:
        no_gate = gate_missing()
        hard_mode += f" (limits={GATE_LIMITS}: {no_gate})" if no_gate else " (its gate too)"
    typer.echo(f"cloudguard doctor: hard seal (run --hard) {hard_mode}", err=True)
    if not sealed:  # not in a sealed run: would pytest seal this project's tests?
        try:
            facts = checks.project_facts(str(python) if python else None, os.getcwd())
        except (OSError, ValueError, subprocess.SubprocessError) as error:
            typer.echo(f"cloudguard doctor: {one_line(str(error), 2000)}", err=True)
            raise typer.Exit(exit_codes.REFUSED_ADMISSION) from None
        said, found = checks.project_verdict(facts, os.environ)
        for fact in said:
            typer.echo(f"cloudguard doctor: {one_line(fact, 2000)}", err=True)
        verdict = "the pytest plugin will seal every test session of this project"
    else:
        found = list(checks.problems(os.environ, rules))
        verdict = "the seal holds"
    for problem in found:  # they quote environment values: escaped for the terminal
        typer.echo(f"cloudguard doctor: {one_line(problem, 2000)}", err=True)
    if found:
        if not sealed:
            typer.echo(
                "cloudguard doctor: (to check a sealed process: `cloudguard run -- cloudguard "
                "doctor`)",
                err=True,
            )
        raise typer.Exit(exit_codes.REFUSED_ADMISSION)
    typer.echo(f"cloudguard doctor: {verdict}", err=True)


# -- odd input: one line, the right code ---------------------------------------------------


def _usage(message: str) -> NoReturn:
    """A usage error the option parser cannot see: one line, exit 2."""
    typer.echo(f"cloudguard: {message}", err=True)
    raise typer.Exit(exit_codes.USAGE)


def _log_path(log: str | None) -> str | None:
    """`--log PATH`, absolute: the log a command's children and nested runs find by
    `CLOUDGUARD_REACH_LOG` wherever they run. `--log ''` names no file: a usage error."""
    if log is None:
        return None
    if not log.strip():
        _usage("--log: an empty path names no file")
    return os.path.abspath(log)


def _reports(values: list[str] | None) -> list[tuple[str, str]]:
    """Each `--report FORMAT=FILE`, checked before anything runs: a malformed one is a usage
    error (2), one whose directory does not exist could not be written (75)."""
    from cloudguard.escape import one_line
    from cloudguard.guard.report import ReportRequestError, parse_requests

    try:
        reports = parse_requests(values or ())
    except ReportRequestError as error:
        _usage(f"--report: {error}")
    for name, path in reports:
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            typer.echo(
                f"cloudguard: cannot write --report {name}={one_line(path, 300)}: "
                f"{one_line(directory, 300)} is not a directory",
                err=True,
            )
            raise typer.Exit(exit_codes.DID_NOT_RUN)
    return reports


def _write_reports(reports: Sequence[tuple[str, str]], found: ReachReport) -> int:
    from cloudguard.guard.report import deliver

    return deliver(reports, found, sys.stderr)


def _reader_may_leave() -> None:
    """A reader that stops reading (`cloudguard check 2>&1 | head -1`) is not an error: once
    its pipe closes, the rest goes nowhere and the command still exits with its verdict."""
    from cloudguard.guard.closed_pipe import reader_may_leave

    reader_may_leave()

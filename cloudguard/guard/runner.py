"""`cloudguard run`: arm a log, seal, run the command, then check the reach log.

The steps are the session's (`cloudguard.guard.session.GuardSession`, shared
with the pytest plugin); this module runs the command between them, in the
hard seal's namespaces with `--hard`, and forwards signals to it.

The run is the record keeper (the verdict comes from its memory, not from the
log file) and keeps itself out of the command's reach: it is non-dumpable (a
process of the same user cannot ptrace it, read its memory or write its /proc
files) and the subreaper of everything the command starts, so whatever the
command leaves behind is killed and named before the verdict.

Before the command starts, the session's witness looks at the ambient roots
and the checkout's tracked files; after it, whatever changed there is a
finding of its own (`ambient-write`, `tracked-write`) held by the keeper
like a reach (`cloudguard.guard.witness`).

The exit code is the command's own when nothing reached and nothing was
written where it must not be, 98 when anything was (the command's code is
printed), 97 when the log cannot be trusted, 127/126 when the command cannot
be started.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from cloudguard import exit_codes
from cloudguard.documents import reach_log
from cloudguard.escape import one_line
from cloudguard.guard import alarm, late_imports, report, stragglers, witness
from cloudguard.guard.hard import launch
from cloudguard.guard.keeper import Keeper
from cloudguard.guard.seal_registry import Registry
from cloudguard.guard.session import GuardSession

COMMAND_NOT_FOUND = exit_codes.COMMAND_NOT_FOUND
COMMAND_NOT_EXECUTABLE = exit_codes.COMMAND_NOT_EXECUTABLE
# Ctrl-C reaches the command from the terminal itself (same process group);
# these are forwarded because they are usually sent to cloudguard alone.
FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def run(
    command: Sequence[str],
    *,
    registry: Registry,
    log: str | None,
    err: TextIO = sys.stderr,
    hard: bool = False,
    forward: Sequence[int] = (),
    allow_unix: Sequence[str] = (),
    reports: Sequence[tuple[str, str]] = (),
) -> int:
    ports = tuple(dict.fromkeys((*registry.forward_ports, *forward)))
    hard_seal = None
    if hard:  # before anything is armed or made: a host that cannot seal hard runs nothing
        try:
            launch.check_requirements()
            # First, while this process has no thread: the seal is made meanwhile.
            kept, writable = witness.read_only(*witness.places(registry, os.environ, Path.cwd()))
            hard_seal = launch.HardSeal.fork(
                masked_homes=registry.masked_homes,
                ports=ports,
                allow_unix=allow_unix,
                roots=[(root.path, root.entry) for root in kept],
                outputs=writable,
                sealed=registry.covers,
            )
        except launch.HardSealError as error:
            err.write(f"cloudguard: --hard: {error}\n")
            return error.exit_code
    try:
        with contextlib.ExitStack() as after_the_command:  # from the command on: no import
            return _run(
                command,
                registry=registry,
                log=log,
                err=err,
                hard_seal=hard_seal,
                reports=reports,
                after_the_command=after_the_command,
            )
    finally:
        if hard_seal is not None:
            hard_seal.close()


def _run(
    command: Sequence[str],
    *,
    registry: Registry,
    log: str | None,
    err: TextIO,
    hard_seal: launch.HardSeal | None,
    reports: Sequence[tuple[str, str]],
    after_the_command: contextlib.ExitStack,
) -> int:
    try:
        armed = alarm.arm_log(log, by="cloudguard run")
    except (reach_log.ReachLogError, OSError) as error:
        err.write(f"cloudguard: cannot arm the reach log: {one_line(str(error), 2000)}\n")
        return exit_codes.REFUSED_ADMISSION
    # Inside another run, its keeper is written into this seal's refusers too: both see it.
    session = GuardSession.start(registry, armed, signalled=True, checkout=Path.cwd())
    if hard_seal is not None and session.witness is not None:
        session.witness.read_only_inside()  # its roots are read-only mounts inside
    keeper = session.keeper
    assert keeper is not None  # a session that starts keeps its own records
    stragglers.keep_out_of_reach()
    stragglers.become_subreaper()
    keep_log = True  # a temporary log is removed only when the run ends clean, or never ran
    try:
        env = session.sealed_environment(os.environ)
        suffix = hard_seal.line_suffix() if hard_seal else ""
        err.write(
            session.seal_line() + suffix + "\n" + (hard_seal.limit_line() if hard_seal else "")
        )
        for note in session.notes():
            err.write(f"cloudguard: {one_line(note, 2000)}\n")
        err.flush()
        # What the verdict and the reports need is loaded now: the command may write
        # where modules are loaded from (cloudguard.guard.late_imports).
        late_imports.load_what_comes_after(reports)
        after_the_command.enter_context(late_imports.refused())
        try:
            if hard_seal is not None:
                code = hard_seal.run(
                    command,
                    env,
                    seal_root=session.seal.root,
                    keeper=keeper,
                    keepers=session.keepers,
                    wait=_wait,
                )
            else:
                code = _spawn(command, env, err)
        except launch.HardSealError as error:
            _stop_stragglers(err, keeper)
            err.write(f"cloudguard: --hard: {error}\n")
            if error.exit_code == exit_codes.DID_NOT_RUN:
                keep_log = False  # nothing ran: no evidence to keep
            else:
                session.check(err)  # what was recorded before the sink failed is still shown
            return _reported(reports, session, error.exit_code, err)
        _stop_stragglers(err, keeper)  # before the verdict, whatever ended the command
        verdict = session.check(err)
        keep_log = verdict == exit_codes.REACH_REFUSED
    finally:
        session.close(keep_log=keep_log)
    if verdict == exit_codes.REACH_REFUSED:
        err.write(f"cloudguard: the command itself exited {code}; the run is red (98)\n")
        return _reported(reports, session, verdict, err)
    return _reported(reports, session, verdict or code, err)


def _reported(
    reports: Sequence[tuple[str, str]], session: GuardSession, code: int, err: TextIO
) -> int:
    """The run's findings in each `--report FORMAT=FILE`, from the keeper's memory."""
    if not reports:
        return code
    found = report.ReachReport.of(
        "cloudguard run", session.log.path, code, session.records(), session.tampering()
    )
    return report.deliver(reports, found, err)


def _spawn(command: Sequence[str], env: dict[str, str], err: TextIO) -> int:
    try:
        child = subprocess.Popen(list(command), env=env)
    except FileNotFoundError:
        err.write(f"cloudguard: command not found: {one_line(command[0], 2000)}\n")
        return COMMAND_NOT_FOUND
    except PermissionError:
        err.write(f"cloudguard: command not executable: {one_line(command[0], 2000)}\n")
        return COMMAND_NOT_EXECUTABLE
    code = _wait(child.pid)
    child.returncode = code  # waited for here: Popen must not wait again
    return code


def _wait(pid: int) -> int:
    """Wait for the child `pid`, forwarding the signals that are usually sent to cloudguard
    alone; its exit code (128+N when it died of signal N)."""

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)

    previous = {sig: signal.signal(sig, forward) for sig in FORWARDED_SIGNALS}
    previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        _, status = os.waitpid(pid, 0)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def _stop_stragglers(err: TextIO, keeper: Keeper) -> None:
    """Kill what the command left running (it would outlive the verdict), and name it."""
    try:
        left = stragglers.stop_all()
    except OSError as error:
        keeper.tamper(f"the processes the command left running could not be looked for ({error})")
        return
    if left:
        err.write(
            f"cloudguard: stopped {len(left)} process(es) the command left running: "
            + "; ".join(left)
            + "\n"
        )

"""Owned ids from a command: for controllers that keep their own list behind an API.

A cloud id the command prints is owned: its VM is explained even without a
record in the fleet's controller layout. It fails closed: a command that
fails, times out or prints anything but ids is `EvidenceError` (the audit did
not run, 75), never "owns nothing".
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from cloudguard import json_input
from cloudguard.audit.evidence.interface import (
    EvidenceError,
    EvidenceRequest,
    EvidenceSource,
    Factory,
    Facts,
    NotSupplied,
    Question,
    cloud_id_key,
)
from cloudguard.cloud.options import (
    EVIDENCE_PANEL,
    NeedsTrust,
    Shown,
    declare,
    parse_argv,
    parse_positive_duration,
)

DEFAULT_COMMAND_TIMEOUT = 60.0  # seconds

COMMAND = declare(
    "owned_ids_command",
    parse=parse_argv,
    default=None,
    metavar="COMMAND",
    help='Command printing the cloud ids its controller owns, one {"id": ...} or '
    "JSON string a line; split into words, never run by a shell.",
    apply=Shown("Command printing the cloud ids its controller owns (never a shell).", "COMMAND"),
    panel=EVIDENCE_PANEL,
    locates=True,
    trust=NeedsTrust("runs a program with your environment and credentials"),
)
# A day is already no limit for one command; the wait for it cannot be much longer (the
# kernel's poll takes at most ~24 days).
LONGEST_TIMEOUT = timedelta(hours=24)


def _timeout(value: object) -> timedelta:
    return parse_positive_duration(value, LONGEST_TIMEOUT)


TIMEOUT = declare(
    "owned_ids_timeout",
    parse=_timeout,
    default=timedelta(seconds=DEFAULT_COMMAND_TIMEOUT),
    metavar="DURATION",
    help="Kill --owned-ids-command after this long: the audit did not run (default: 60s).",
    apply=Shown("Kill --owned-ids-command after this long (default: 60s).", "DURATION"),
    panel=EVIDENCE_PANEL,
)


def run_owned_ids_command(
    argv: tuple[str, ...], timeout: float = DEFAULT_COMMAND_TIMEOUT
) -> frozenset[str]:
    """Run `argv` (never through a shell) and parse its stdout.

    Each line is `{"id": "..."}` or a bare JSON string; blank lines are
    ignored. The command inherits the environment: it is the operator's own
    command and may need their credentials to ask its controller's API. It
    gets no stdin, and runs in its own session so that on timeout the whole
    process group is killed, grandchildren included.
    """
    source = f"owned-ids command {argv[0] if argv else '(empty)'}"
    if not argv:
        raise EvidenceError(source, "no command given")
    try:
        process = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise EvidenceError(source, f"cannot run: {exc}") from exc
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        _kill_group(process)
        raise EvidenceError(source, f"timed out after {timeout:g} s (killed)") from exc
    finally:
        if process.returncode is None:
            _kill_group(process)
    if process.returncode != 0:
        last = stderr.decode("utf-8", errors="replace").strip().splitlines()[-1:] or [""]
        said = f": {last[0][:200]}" if last[0] else ""
        raise EvidenceError(source, f"exited {_status(process.returncode)}{said}")
    return _parse_json_lines(stdout, source)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(process.pid, signal.SIGKILL)
    process.communicate()


def _status(returncode: int) -> str:
    return f"on signal {-returncode}" if returncode < 0 else f"with status {returncode}"


def _parse_json_lines(stdout: bytes, source: str) -> frozenset[str]:
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EvidenceError(source, f"output is not UTF-8: {exc}") from exc
    owned: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        # Name the line, never quote it: it is untrusted output.
        try:
            entry: Any = json_input.loads(line)
        except json.JSONDecodeError:
            raise EvidenceError(source, f"output line {number} is not JSON") from None
        cloud_id = entry.get("id") if isinstance(entry, dict) else entry
        if not isinstance(cloud_id, str) or not cloud_id.strip():
            raise EvidenceError(
                source, f'output line {number} is neither {{"id": "..."}} nor a JSON string'
            )
        owned.add(cloud_id_key(cloud_id))
    return frozenset(owned)


@dataclass(frozen=True)
class OwnedIdsCommand:
    argv: tuple[str, ...]
    timeout: float
    name: str = "owned-ids-command"
    proves_ownership: bool = True

    @property
    def reads(self) -> str:
        # The program only: arguments may carry a token, and the report is a record.
        return f"owned-ids command {self.argv[0]}"

    def facts(self, question: Question) -> Facts:
        return Facts(owned_ids=run_owned_ids_command(self.argv, self.timeout))


def _build(request: EvidenceRequest) -> EvidenceSource | NotSupplied:
    argv = request.value(COMMAND)
    if argv is None:
        return NotSupplied("no --owned-ids-command")
    return OwnedIdsCommand(tuple(argv), _seconds(request.value(TIMEOUT)))


def _seconds(timeout: timedelta | float) -> float:
    return timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)


FACTORY = Factory(_build, options=(COMMAND, TIMEOUT))

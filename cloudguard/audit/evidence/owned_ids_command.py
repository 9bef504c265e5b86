"""Owned ids from a plain file or from a command: for controllers that keep their own list.

A cloud id either source names is owned: its VM is explained even without a
record in the fleet's controller layout. Both fail closed: a file that cannot
be read, a command that fails, times out or prints anything but ids, is
`EvidenceError` (the audit did not run, 75), never "owns nothing".
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cloudguard.audit.evidence import EvidenceError, cloud_id_key
from cloudguard.audit.evidence_interface import EvidenceSource, Facts, NotSupplied, Question

if TYPE_CHECKING:
    from cloudguard.audit.engine import EvidenceSources

DEFAULT_COMMAND_TIMEOUT = 60.0  # seconds

# --------------------------------------------------------------------------
# A plain file: one id a line (`#` comments, blank lines ignored), or a JSON list


def read_owned_ids_file(path: str | Path) -> frozenset[str]:
    source = f"owned ids {path}"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvidenceError(source, f"cannot read: {exc}") from exc
    if text.lstrip().startswith("["):
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise EvidenceError(source, f"not a JSON list: {exc}") from exc
        if not isinstance(document, list):
            raise EvidenceError(source, "not a JSON list")  # e.g. `[1] [2]` is not JSON at all
        for index, item in enumerate(document):
            if not isinstance(item, str) or not item.strip():
                raise EvidenceError(source, f"item {index} is not a non-empty string")
        return frozenset(cloud_id_key(item) for item in document)
    lines = (line.strip() for line in text.splitlines())
    return frozenset(cloud_id_key(line) for line in lines if line and not line.startswith("#"))


@dataclass(frozen=True)
class OwnedIdsFiles:
    paths: tuple[str, ...]
    name: str = "owned-ids-file"
    proves_ownership: bool = True

    @property
    def reads(self) -> str:
        return ", ".join(f"owned ids {path}" for path in self.paths)

    def facts(self, question: Question) -> Facts:
        owned: set[str] = set()
        for path in self.paths:
            owned |= read_owned_ids_file(path)
        return Facts(owned_ids=frozenset(owned))


def owned_ids_files(options: EvidenceSources) -> EvidenceSource | NotSupplied:
    if not options.owned_ids:
        return NotSupplied("no --owned-ids")
    return OwnedIdsFiles(tuple(options.owned_ids))


# --------------------------------------------------------------------------
# A command that prints the ids its controller owns, as JSON lines


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
            entry: Any = json.loads(line)
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


def owned_ids_command(options: EvidenceSources) -> EvidenceSource | NotSupplied:
    if options.owned_ids_command is None:
        return NotSupplied("no --owned-ids-command")
    return OwnedIdsCommand(tuple(options.owned_ids_command), options.owned_ids_timeout)

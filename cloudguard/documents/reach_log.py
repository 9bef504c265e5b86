"""The reach log (schema 1): the format, and its strict reader.

Format (JSON Lines; cloudguard/schemas/reach-log.schema.json, docs/reference.md):

    {"$schema": ..., "schema": 1, "kind": "armed", "at": ..., "by": ..., "pid": ...}
    {"schema": 1, "kind": "reach", "at": ..., "via": "az-shim", "argv": [...],
     "target": ..., "test": ..., "pid": ..., "ppid": ..., "cwd": ...,
     "identity_vars": [...]}

The `armed` header is written by whoever arms the log (`cloudguard run`, the
pytest plugin: cloudguard.guard.alarm), each `reach` line by the writer
every refuser calls, `cloudguard.guard.reach`: the guard's fast path, kept
out of this package so the shims never import it (see its docstring). This
module is the one parser of the format: `read` refuses a log that is
missing, not armed, malformed or torn (fail closed: the callers exit 97).
"""

from __future__ import annotations

import fcntl
import json

from cloudguard import private_files
from cloudguard.guard.reach import SCHEMA

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


class ReachLogError(Exception):
    """The log is missing, not armed, malformed or torn: the alarm cannot be read."""


class OffsetError(ReachLogError):
    """A start offset inside a line: no earlier read ended there (a caller's mistake)."""


class ReachLog:
    """A parsed log: its header, the reach records from the requested offset, where it ends."""

    __slots__ = ("end", "header", "reaches")

    def __init__(
        self, header: Mapping[str, object], reaches: tuple[Mapping[str, object], ...], end: int
    ):
        self.header = header
        self.reaches = reaches
        self.end = end  # byte offset after the last complete line: where a later check starts


def _is_armed_header(line: bytes) -> bool:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):  # nested too deeply to read: no header either
        return False
    return isinstance(record, dict) and record.get("kind") == "armed" and "schema" in record


def read(path: str, *, start: int = 0) -> ReachLog:
    """Parse the log. `start` is a byte offset from an earlier read (a later check).

    Raises ReachLogError naming the line when the log is missing, not armed,
    malformed or ends in a torn line.
    """
    try:
        # One open that never waits (a FIFO named as the log would hang the check), checked
        # to be a regular file before the first read.
        with open(private_files.open_regular(path, follow=True), "rb") as handle:
            # Writers append under an exclusive flock: a shared one means no half-written
            # line from a live writer is mistaken for a torn one.
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
            data = handle.read()
    except FileNotFoundError:
        raise ReachLogError(f"reach log {path} does not exist (deleted, or never armed)") from None
    except OSError as error:
        why = error.strerror or str(error)  # UnsafePathError says what the file is
        raise ReachLogError(f"reach log {path} cannot be read: {why}") from None
    if not data:
        raise ReachLogError(f"reach log {path} is empty: it was never armed")
    lines = data.split(b"\n")
    if not _is_armed_header(lines[0]):
        # Before any torn/malformed detail: a file that never was a reach log
        # (a report, a config) is not one "torn at line 9".
        raise ReachLogError(
            f"reach log {path} is not armed: {path} is not a cloudguard reach log "
            "(its first line is not the armed header `cloudguard run` and the pytest "
            "plugin write)"
        )
    if lines[-1]:
        raise ReachLogError(
            f"reach log {path} line {len(lines)} is torn (no newline): a writer died mid-record"
        )
    header: Mapping[str, object] | None = None
    reaches: list[Mapping[str, object]] = []
    offset = 0
    line_starts = {0}  # where a later read may start: a line's start, or the end
    for number, raw in enumerate(lines[:-1], start=1):
        line_start = offset
        offset += len(raw) + 1
        line_starts.add(offset)
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):  # RecursionError: nested too deeply to read
            raise ReachLogError(
                f"reach log {path} line {number} is not a JSON record (torn or corrupted)"
            ) from None
        if not isinstance(record, dict) or record.get("schema") != SCHEMA:
            raise ReachLogError(f"reach log {path} line {number} is not a schema {SCHEMA} record")
        kind = record.get("kind")
        if number == 1:
            if kind != "armed":
                raise ReachLogError(f"reach log {path} is not armed: line 1 is not an armed header")
            header = record
        elif kind == "reach":
            if line_start >= start:
                reaches.append(record)
        else:
            raise ReachLogError(f"reach log {path} line {number} has unknown kind {kind!r}")
    if header is None:
        raise ReachLogError(f"reach log {path} is not armed")
    if start > offset:  # fail closed: what was past it is gone, or it is another log's offset
        raise ReachLogError(
            f"reach log {path} ends at byte {offset}, before the offset {start} to check from: "
            "it shrank, or the offset is another log's"
        )
    if start not in line_starts:
        raise OffsetError(
            f"--since {start} is inside a line of {path}: give where an earlier check or run "
            f"ended (a line's start, e.g. {max(s for s in line_starts if s < start)})"
        )
    return ReachLog(header, tuple(reaches), offset)

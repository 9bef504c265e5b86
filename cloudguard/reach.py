"""The reach log: schema, arming, concurrency-safe appends, reading, checking.

Stdlib only and cheap to import: the shims and the refusing provider write
through this module on their fast path.

Format (JSON Lines, schema-versioned; see docs/reference.md):

    {"schema": 1, "kind": "armed", "at": ..., "by": ..., "pid": ...}
    {"schema": 1, "kind": "reach", "at": ..., "via": "az-shim", "argv": [...],
     "target": ..., "test": ..., "pid": ..., "ppid": ..., "cwd": ...,
     "identity_vars": [...]}

A record is one `os.write` of one line to a descriptor opened with O_APPEND,
under an exclusive `flock`: concurrent writers neither interleave nor lose
records. A writer killed mid-line leaves a line without its newline; the
next writer starts on a fresh line so its own record stays whole, and
`check` refuses the torn line (fail closed).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

SCHEMA = 1
LOG_VARIABLE = "CLOUDGUARD_REACH_LOG"
TEST_VARIABLE = "CLOUDGUARD_TEST"

# Bounds so that a huge argv cannot make a huge record (or a slow write).
MAX_ARG_CHARS = 2048
MAX_ARGS = 256

REDACTED = "<redacted>"

# Options whose value is a secret (`--password X` or `--password=X`).
_SECRET_OPTION = re.compile(
    r"^--?(?:"
    r"p|password|passwd|pass|secret|client-secret|token|sas-token|access-token|id-token"
    r"|federated-token|connection-string|account-key|key|access-key|secret-key"
    r"|secret-access-key|aws-secret-access-key|session-token|private-key|certificate-password"
    r"|service-principal-password|api-key|auth-token|credentials?|sas|signature"
    r")$",
    re.IGNORECASE,
)
# Values that carry a secret whatever option (if any) precedes them.
_SECRET_VALUE = re.compile(
    r"(?:AccountKey=|SharedAccessKey=|SharedAccessSignature=|[?&]sig=|Password=|pwd="
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # a JWT
    r"|\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"  # an AWS access key id
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----)",
    re.IGNORECASE,
)


class ReachLogError(Exception):
    """The log is missing, not armed, malformed or torn: the alarm cannot be read."""


@dataclass(frozen=True)
class ReachLog:
    header: Mapping[str, object]
    reaches: tuple[Mapping[str, object], ...]
    end: int  # byte offset after the last complete line: where a later check starts


def now() -> str:
    """UTC timestamp with milliseconds; avoids importing datetime on the fast path."""
    seconds = time.time()
    return (
        time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
        + f".{int(seconds % 1 * 1000):03d}Z"
    )


def printable(arg: str | bytes) -> str:
    """An argv element as text; bytes that are not UTF-8 become backslash escapes."""
    raw = arg if isinstance(arg, bytes) else os.fsencode(arg)
    text = raw.decode("utf-8", "backslashreplace")
    if len(text) > MAX_ARG_CHARS:
        text = text[:MAX_ARG_CHARS] + f"...<{len(text) - MAX_ARG_CHARS} more chars>"
    return text


def redact_argv(argv: Sequence[str | bytes]) -> list[str]:
    """argv made safe to record: secret option values and secret-looking values hidden."""
    out: list[str] = []
    hide_next = False
    for arg in list(argv)[:MAX_ARGS]:
        text = printable(arg)
        if hide_next:
            out.append(REDACTED)
            hide_next = False
            continue
        option, eq, _value = text.partition("=")
        if option.startswith("-") and _SECRET_OPTION.match(option):
            if eq:
                out.append(f"{option}={REDACTED}")
            else:
                out.append(text)
                hide_next = True
            continue
        out.append(REDACTED if _SECRET_VALUE.search(text) else text)
    if len(argv) > MAX_ARGS:
        out.append(f"...<{len(argv) - MAX_ARGS} more args>")
    return out


def _line(record: Mapping[str, object]) -> bytes:
    return (json.dumps(record, ensure_ascii=True, separators=(",", ":")) + "\n").encode("ascii")


def arm(path: str, *, by: str) -> int:
    """Create (or truncate) `path` as an armed log. Returns the offset after the header."""
    header = {"schema": SCHEMA, "kind": "armed", "at": now(), "by": by, "pid": os.getpid()}
    line = _line(header)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
    return len(line)


def reach_record(
    *,
    via: str,
    argv: Sequence[str | bytes],
    target: str,
    identity_vars: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
    **extra: object,
) -> dict[str, object]:
    env = os.environ if environ is None else environ
    try:
        cwd = os.getcwd()
    except OSError:  # the working directory was deleted under us
        cwd = "<unknown>"
    record: dict[str, object] = {
        "schema": SCHEMA,
        "kind": "reach",
        "at": now(),
        "via": via,
        "argv": redact_argv(argv),
        "target": target,
        "test": env.get(TEST_VARIABLE) or env.get("PYTEST_CURRENT_TEST") or "",
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "cwd": cwd,
        "identity_vars": sorted(identity_vars),
    }
    record.update(extra)
    return record


def append(path: str, record: Mapping[str, object]) -> None:
    """Append one record. Raises OSError when the log cannot be written.

    The log is never created here: a missing log was deleted or never armed,
    and `check` must see that (97) rather than a fresh, quiet file.
    """
    line = _line(record)
    fd = os.open(path, os.O_RDWR | os.O_APPEND)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line  # a writer died mid-line: keep our record whole
        written = os.write(fd, line)
        if written != len(line):
            raise OSError(f"short write to reach log ({written} of {len(line)} bytes)")
    finally:
        os.close(fd)  # closing releases the lock


def read(path: str, *, start: int = 0) -> ReachLog:
    """Parse the log. `start` is a byte offset from an earlier read (a later check).

    Raises ReachLogError naming the line when the log is missing, not armed,
    malformed or ends in a torn line.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise ReachLogError(f"reach log {path} does not exist (deleted, or never armed)") from None
    except OSError as error:
        raise ReachLogError(f"reach log {path} cannot be read: {error.strerror}") from None
    if not data:
        raise ReachLogError(f"reach log {path} is empty: it was never armed")
    lines = data.split(b"\n")
    if lines[-1]:
        raise ReachLogError(
            f"reach log {path} line {len(lines)} is torn (no newline): a writer died mid-record"
        )
    header: Mapping[str, object] | None = None
    reaches: list[Mapping[str, object]] = []
    offset = 0
    for number, raw in enumerate(lines[:-1], start=1):
        line_start = offset
        offset += len(raw) + 1
        try:
            record = json.loads(raw)
        except ValueError:
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
    return ReachLog(header=header, reaches=tuple(reaches), end=offset)


def describe(record: Mapping[str, object]) -> str:
    """Who reached what, through which channel, from which test: one line, then details."""
    argv = record.get("argv")
    command = " ".join(map(str, argv)) if isinstance(argv, list) else ""
    identity = record.get("identity_vars")
    lines = [
        f"{record.get('via')} reached `{record.get('target') or '?'}`"
        f" from test {record.get('test') or '<none named>'}"
        f" (pid {record.get('pid')}, cwd {record.get('cwd')}, at {record.get('at')})"
    ]
    if command:
        lines.append(f"    argv: {command}")
    if isinstance(identity, list) and identity:
        lines.append(f"    identity variables still set: {', '.join(map(str, identity))}")
    return "\n".join(lines)

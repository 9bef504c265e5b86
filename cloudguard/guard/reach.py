"""The reach log's fast writer: build a record, append it, tell the watch.

The refusing shims and provider, the in-process guards and the hard seal's
sink build a record here (`reach_record`) and append it (`append`, or
`record_status` for a refuser that must refuse whatever happens). Stdlib
only and cheap to import: no `json`, no `re`, no `socket`, so the shims
start in about the time of a bare `python3 -I -S` (benchmarks/bench_guard.py).
The format, and its strict reader, are the document's:
`cloudguard.documents.reach_log`; arming, watching and judging a log is the
check side's: `cloudguard.guard.alarm`.

Why the writer is not in `cloudguard/documents/reach_log.py` beside its
reader: every shim would then import the `cloudguard.documents` package on
its fast path. Measured (1,000 interleaved rounds, and `-X importtime`): a
refused and recorded shim call ~30 us (0.3 %) slower than with the writer
here, where the shim's start-up is unchanged from before the split.

A record is one `os.write` of one line to a descriptor opened with O_APPEND,
under an exclusive `flock`: concurrent writers neither interleave nor lose
records. A writer killed mid-line leaves a line without its newline; the
next writer starts on a fresh line so its own record stays whole, and the
reader refuses the torn line (fail closed).

Trust (docs/guard.md, "The reach log can be trusted"): writers never create
the log (arming it is the check side's: cloudguard.guard.alarm), never
follow a symlink and write only a file of their own user's. After each
record a writer tells the process that armed the log, over a datagram
socket that process owns, where its record ended (`watch_address`): the
one fact a test cannot take back by truncating the file.

Delivery (`append`: the file, the lock, the datagram) is the seam a record
keeper replaces: the record (`reach_record`, `record_line`) and the reader
stay what the schema says.
"""

from __future__ import annotations

import fcntl
import os
import time

try:  # the C string encoder alone: `import json` would also load re (a third of our start-up)
    from _json import encode_basestring_ascii as _json_string
except ImportError:  # not CPython
    from json.encoder import encode_basestring_ascii as _json_string

from cloudguard.guard.redaction import redact_argv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

SCHEMA = 1  # what each line says it is, and what the reader admits
# cloudguard/schemas/reach-log.schema.json (its $id; a literal, so no import here).
REACH_LOG_SCHEMA_ID = "urn:cloudguard-ci:schema:reach-log:1"
LOG_VARIABLE = "CLOUDGUARD_REACH_LOG"
TEST_VARIABLE = "CLOUDGUARD_TEST"


# -- the record ----------------------------------------------------------------------------


def now() -> str:
    """UTC timestamp with milliseconds; avoids importing datetime on the fast path."""
    seconds = time.time()
    return (
        time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
        + f".{int(seconds % 1 * 1000):03d}Z"
    )


def reach_record(
    *,
    via: str,
    argv: Sequence[str | bytes],
    target: str,
    identity_vars: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
    **extra: object,
) -> dict[str, object]:
    """One reach: who (test, pid, cwd), through what (`via`), to what, argv redacted."""
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


def _encode(value: object) -> str:
    """Compact JSON for the record's value types (str, int, bool, None, list, dict)."""
    if isinstance(value, str):
        return _json_string(value)
    if value is None or isinstance(value, bool):
        return "null" if value is None else ("true" if value else "false")
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ",".join(_encode(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{" + ",".join(f"{_json_string(str(k))}:{_encode(v)}" for k, v in value.items()) + "}"
        )
    return _json_string(str(value))


def record_line(record: Mapping[str, object]) -> bytes:
    """One record as the line the log holds: compact JSON, ASCII, newline-terminated."""
    return (_encode(dict(record)) + "\n").encode("ascii")


def write_header(fd: int, by: str) -> int:
    """Write the `armed` header to a new, empty log; its length in bytes."""
    line = record_line(
        {
            "$schema": REACH_LOG_SCHEMA_ID,  # the header only: reach lines stay lean
            "schema": SCHEMA,
            "kind": "armed",
            "at": now(),
            "by": by,
            "pid": os.getpid(),
        }
    )
    written = os.write(fd, line)
    if written != len(line):
        raise OSError(f"short write of the reach log header ({written} of {len(line)} bytes)")
    return len(line)


# -- the writer ----------------------------------------------------------------------------


def append(path: str, record: Mapping[str, object]) -> None:
    """Append one record. Raises OSError when the log cannot be written.

    The log is never created here: a missing log was deleted or never armed,
    and `check` must see that (97) rather than a fresh, quiet file. A symlink
    is never followed, and a file of another user's is not written.
    """
    line = record_line(record)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        status = os.fstat(fd)
        if status.st_uid != os.geteuid():
            raise OSError(f"reach log {path} is owned by uid {status.st_uid}, not ours")
        size = status.st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line  # a writer died mid-line: keep our record whole
        written = os.write(fd, line)
        if written != len(line):
            raise OSError(f"short write to reach log ({written} of {len(line)} bytes)")
        _tell_watcher(status, size + written)
    finally:
        os.close(fd)  # closing releases the lock


def record_status(log: str, record: Mapping[str, object]) -> str:
    """Append `record` to `log` if one is armed; say, for the refusal message, what happened.

    Never raises: a refuser that cannot record still refuses, and says so.
    """
    if not log:
        return f"NOT recorded: {LOG_VARIABLE} is not set (no reach log armed)"
    try:
        append(log, record)
    except OSError as error:
        return f"NOT recorded: cannot write reach log {log}: {error.strerror or error}"
    return f"recorded in {log}"


def watch_address(status: os.stat_result) -> bytes:
    """The watcher's socket for one log: named by the log's inode (Linux abstract namespace)."""
    return b"\0cloudguard-reach-%d-%d" % (status.st_dev, status.st_ino)


def _tell_watcher(status: os.stat_result, end: int) -> None:
    """Tell whoever armed the log where our record ends; nobody listening is fine.

    `_socket`, not `socket`: the C module alone is cheap to import and is not the
    class the in-process socket guard wraps (this is a local datagram, not a reach).
    """
    try:
        import _socket

        sender = _socket.socket(_socket.AF_UNIX, _socket.SOCK_DGRAM | _socket.SOCK_CLOEXEC)
    except (ImportError, AttributeError, OSError):
        return  # no AF_UNIX here: the watcher still has the inode and its own high-water mark
    try:
        sender.sendto(b"%d" % end, _socket.MSG_DONTWAIT, watch_address(status))
    except OSError:
        pass  # no watcher (a log continued across runs), or its queue is full
    finally:
        sender.close()

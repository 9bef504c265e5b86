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

Trust (docs/guard.md, "The reach log can be trusted"): a log is created
O_EXCL|O_NOFOLLOW, mode 0600, and continued only when it is a regular file
of the caller's own; writers never follow a symlink. The process that armed
the log keeps a `LogWatch`: the log's inode, and a high-water mark fed by
every writer, which tells the watcher over a datagram socket the watcher
owns where its record ended. A log that was replaced, deleted, or is
shorter than any record ever written to it (a test that records a reach and
truncates the log back to where it started) is a ReachLogError (97), never
a clean check.
"""

from __future__ import annotations

import fcntl
import os
import time

try:  # the C string encoder alone: `import json` would also load re (a third of our start-up)
    from _json import encode_basestring_ascii as _json_string
except ImportError:  # not CPython
    from json.encoder import encode_basestring_ascii as _json_string

from cloudguard.guard.redaction import (
    REDACTED,
    is_option,
    is_secret_name,
    names_a_secret_setting,
    redact_value,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    from collections.abc import Iterable, Mapping, Sequence

SCHEMA = 1
# cloudguard/schemas/reach-log.schema.json (its $id; a literal, so no import here).
REACH_LOG_SCHEMA_ID = "urn:cloudguard-ci:schema:reach-log:1"
LOG_VARIABLE = "CLOUDGUARD_REACH_LOG"
TEST_VARIABLE = "CLOUDGUARD_TEST"

# Bounds so that a huge argv cannot make a huge record (or a slow write).
MAX_ARG_CHARS = 2048
MAX_ARGS = 256

# Options whose value was redacted before redaction judged names by what they are; kept
# for reference (cloudguard.guard.redaction decides now, by secret words, not by this list).
SECRET_OPTIONS = frozenset(
    (
        *("p", "pass", "passwd", "password", "certificate-password", "service-principal-password"),
        *("secret", "client-secret", "key", "account-key", "access-key", "secret-key"),
        *("secret-access-key", "aws-secret-access-key", "private-key", "api-key"),
        *("token", "sas", "sas-token", "access-token", "id-token", "federated-token"),
        *("session-token", "auth-token", "signature", "credential", "credentials"),
        "connection-string",
    )
)


class ReachLogError(Exception):
    """The log is missing, not armed, malformed or torn: the alarm cannot be read."""


class ReachLog:
    """A parsed log: its header, the reach records from the requested offset, where it ends."""

    __slots__ = ("end", "header", "reaches")

    def __init__(
        self, header: Mapping[str, object], reaches: tuple[Mapping[str, object], ...], end: int
    ):
        self.header = header
        self.reaches = reaches
        self.end = end  # byte offset after the last complete line: where a later check starts


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
    """argv made safe to record: every secret hidden by what it is (cloudguard.guard.redaction)."""
    out: list[str] = []
    hide_next = False
    for arg in list(argv)[:MAX_ARGS]:
        text = printable(arg)
        if hide_next:
            hide_next = False
            if not text.startswith("--"):  # a flag-like secret option is followed by an option
                out.append(REDACTED)
                continue
        if is_option(text):
            option, eq, value = text.partition("=")
            if is_secret_name(option):
                out.append(f"{option}={REDACTED}" if eq else text)
                hide_next = not eq
            else:
                out.append(f"{option}={redact_value(value)}" if eq else text)
            continue
        if names_a_secret_setting(text):  # `aws configure set aws_secret_access_key VALUE`
            hide_next = True
        out.append(redact_value(text))
    if len(argv) > MAX_ARGS:
        out.append(f"...<{len(argv) - MAX_ARGS} more args>")
    return out


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


def _line(record: Mapping[str, object]) -> bytes:
    return (_encode(dict(record)) + "\n").encode("ascii")


def _header(by: str) -> bytes:
    return _line(
        {
            "$schema": REACH_LOG_SCHEMA_ID,  # the header only: reach lines stay lean
            "schema": SCHEMA,
            "kind": "armed",
            "at": now(),
            "by": by,
            "pid": os.getpid(),
        }
    )


def _write_header(fd: int, by: str) -> int:
    line = _header(by)
    written = os.write(fd, line)
    if written != len(line):
        raise OSError(f"short write of the reach log header ({written} of {len(line)} bytes)")
    return len(line)


def arm(path: str, *, by: str) -> int:
    """Create `path` as a new armed log (0600, never through a link, never an existing file).

    Returns the offset after the header. Raises UnsafePathError (an OSError) when
    anything already exists at `path`.
    """
    from cloudguard import private_files  # the arming side only: writers never create

    fd = private_files.create_new(path)
    try:
        return _write_header(fd, by)
    finally:
        os.close(fd)


def arm_or_continue(path: str, *, by: str) -> int:
    """Arm `path`, or continue it when it already is an armed log of the caller's own.

    Returns the offset where the caller's own records start (earlier evidence is
    kept). An empty file of the caller's own is armed in place. Raises
    ReachLogError for a symlink (dangling or not), a file that is not regular or
    is another user's (its owner could read argv and truncate the evidence), or
    an existing file that is not an armed log: none of them is ours to use.
    """
    from cloudguard import private_files

    try:
        return arm(path, by=by)
    except private_files.UnsafePathError:
        pass  # something is there: continue it only when it is an own armed log
    except OSError as error:
        if os.path.islink(path):
            raise ReachLogError(f"reach log {path} is a symbolic link: refused") from None
        raise ReachLogError(f"reach log {path} cannot be created: {error.strerror}") from None
    try:
        fd = private_files.open_own(path, os.O_WRONLY | os.O_APPEND)
    except OSError as error:
        raise ReachLogError(f"reach log {path} is not ours to continue: {error}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if os.fstat(fd).st_size == 0:
            return _write_header(fd, by)
    finally:
        os.close(fd)
    return read(path).end


def arm_temporary(*, by: str) -> tuple[str, int]:
    """A fresh armed log in the temporary directory: (path, offset after its header)."""
    import tempfile

    handle, path = tempfile.mkstemp(prefix="cloudguard-reach-", suffix=".jsonl")  # O_EXCL, 0600
    try:
        return path, _write_header(handle, by)
    finally:
        os.close(handle)


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
    and `check` must see that (97) rather than a fresh, quiet file. A symlink
    is never followed, and a file of another user's is not written.
    """
    line = _line(record)
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


def _watch_address(status: os.stat_result) -> bytes:
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
        sender.sendto(b"%d" % end, _socket.MSG_DONTWAIT, _watch_address(status))
    except OSError:
        pass  # no watcher (a log continued across runs), or its queue is full
    finally:
        sender.close()


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


def _is_armed_header(line: bytes) -> bool:
    import json

    try:
        record = json.loads(line)
    except ValueError:
        return False
    return isinstance(record, dict) and record.get("kind") == "armed" and "schema" in record


def read(path: str, *, start: int = 0) -> ReachLog:
    """Parse the log. `start` is a byte offset from an earlier read (a later check).

    Raises ReachLogError naming the line when the log is missing, not armed,
    malformed or ends in a torn line.
    """
    import json  # here, not at module scope: the refusing fast path never reads

    try:
        with open(path, "rb") as handle:
            # Writers append under an exclusive flock: a shared one means no half-written
            # line from a live writer is mistaken for a torn one.
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
            data = handle.read()
    except FileNotFoundError:
        raise ReachLogError(f"reach log {path} does not exist (deleted, or never armed)") from None
    except OSError as error:
        raise ReachLogError(f"reach log {path} cannot be read: {error.strerror}") from None
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
    return ReachLog(header, tuple(reaches), offset)


class LogWatch:
    """The arming process's hold on its log: a replaced, deleted or shrunk log is caught.

    Keeps the log open (its inode) and a high-water mark: the largest size ever
    seen, and the largest record end any writer reported on the watch socket.
    `verify` is cheap (two stats and a non-blocking receive) and is called
    before every look at the log.
    """

    def __init__(self, path: str) -> None:
        from cloudguard import private_files

        self.path = path
        try:
            self._fd = private_files.open_own(path, os.O_RDONLY)
        except OSError as error:
            raise ReachLogError(f"reach log {path} cannot be watched: {error}") from None
        status = os.fstat(self._fd)
        self._identity = (status.st_dev, status.st_ino)
        self.high_water = status.st_size
        self._socket = self._listen(status)

    @staticmethod
    def _listen(status: os.stat_result) -> socket.socket | None:
        """The watch socket, or None when another process already watches this log.

        The first process to arm or continue a log watches it (`cloudguard run`); a
        pytest session inside that run keeps its own inode and high-water mark, and
        the run's watcher catches what the session cannot.
        """
        import socket  # the watcher side only: writers use _socket

        receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            receiver.bind(_watch_address(status))
        except OSError:
            receiver.close()
            return None
        receiver.setblocking(False)
        return receiver

    @property
    def witnessed(self) -> bool:
        """Whether writers report to this watch (it owns the log's watch socket)."""
        return self._socket is not None

    def verify(self) -> int:
        """The log's current size. Raises ReachLogError when it was replaced or shrunk."""
        self._drain()
        try:
            at_path = os.lstat(self.path)
        except FileNotFoundError:
            raise ReachLogError(
                f"reach log {self.path} does not exist (deleted while armed)"
            ) from None
        if (at_path.st_dev, at_path.st_ino) != self._identity:
            raise ReachLogError(f"reach log {self.path} was replaced by another file while armed")
        size = os.fstat(self._fd).st_size
        if size < self.high_water:
            raise ReachLogError(
                f"reach log {self.path} shrank from {self.high_water} to {size} bytes while "
                "armed: records were removed"
            )
        self.high_water = size
        return size

    def _drain(self) -> None:
        if self._socket is None:
            return
        receive = self._socket.recv
        while True:
            try:
                message = receive(64)
            except (BlockingIOError, InterruptedError):
                return
            if message.isdigit():
                self.high_water = max(self.high_water, int(message))

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def describe(record: Mapping[str, object]) -> str:
    """Who reached what, through which channel, from which test: one line, then details.

    Every field came from outside (argv, the target, the test name, the working
    directory): each is escaped for the terminal (cloudguard.escape).
    """
    from cloudguard.escape import one_line  # here: the refusers' fast path never describes

    def shown(value: object, limit: int = 300) -> str:
        return one_line(str(value), limit)

    argv = record.get("argv")
    command = " ".join(map(str, argv)) if isinstance(argv, list) else ""
    identity = record.get("identity_vars")
    lines = [
        f"{shown(record.get('via'))} reached `{shown(record.get('target') or '?')}`"
        f" from test {shown(record.get('test') or '<none named>')}"
        f" (pid {shown(record.get('pid'))}, cwd {shown(record.get('cwd'))},"
        f" at {shown(record.get('at'))})"
    ]
    if command:
        lines.append(f"    argv: {shown(command, 2000)}")
    operation, served = record.get("operation"), record.get("for")
    if operation:  # named by an SDK hook: what the call was, and whose call it served
        lines.append(
            f"    operation: {shown(operation)}"
            + (f" (for {shown(served, 2000)})" if served else "")
        )
    if isinstance(identity, list) and identity:
        lines.append(
            f"    identity variables still set: {shown(', '.join(map(str, identity)), 2000)}"
        )
    return "\n".join(lines)

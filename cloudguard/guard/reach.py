"""The reach log's fast writer: build a record, hand it to the record keeper (or append it).

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
follow a symlink and write only a file of their own user's. A run's
refusers deliver each record to its record keeper (`deliver`, over the
keeper's channel: cloudguard.guard.keeper), which holds it in memory and is
the log's only writer; `append` is for a log with no keeper. The record
(`reach_record`, `record_line`) and the reader stay what the schema says.
"""

from __future__ import annotations

# `posix`, not `os`: the same system calls, without the ~1 ms of modules `os` loads (its
# path and mapping machinery) that the refusers' start-up would pay for nothing.
import posix
import sys
import time

try:  # the C string encoder alone: `import json` would also load re (a third of our start-up)
    from _json import encode_basestring_ascii as _json_string
except ImportError:  # not CPython
    from json.encoder import encode_basestring_ascii as _json_string

from cloudguard.guard.redaction import redact_argv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

SCHEMA = 1  # what each line says it is, and what the reader admits
# cloudguard/schemas/reach-log.schema.json (its $id; a literal, so no import here).
REACH_LOG_SCHEMA_ID = "urn:cloudguard-ci:schema:reach-log:1"
LOG_VARIABLE = "CLOUDGUARD_REACH_LOG"
TEST_VARIABLE = "CLOUDGUARD_TEST"
# A write where a run must not write is recorded as a reach through these channels
# (cloudguard.guard.witness): the same record, keeper and verdict.
AMBIENT_WRITE = "ambient-write"
TRACKED_WRITE = "tracked-write"
WRITE_VIAS = (AMBIENT_WRITE, TRACKED_WRITE)
# Where in the test the reaching process is, as the pytest plugin says it (each only while it
# holds): the test's file and line, the fixture (or class setup) running, and `collection`
# while test files are imported. The phase of a test comes from pytest's own variable.
LOCATION_VARIABLE = "CLOUDGUARD_LOCATION"
FIXTURE_VARIABLE = "CLOUDGUARD_FIXTURE"
PHASE_VARIABLE = "CLOUDGUARD_PHASE"
PYTEST_TEST_VARIABLE = "PYTEST_CURRENT_TEST"  # pytest's own: `NODEID (setup|call|teardown)`


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
    env = environment() if environ is None else environ
    try:
        cwd = posix.getcwd()
    except OSError:  # the working directory was deleted under us
        cwd = "<unknown>"
    record: dict[str, object] = {
        "schema": SCHEMA,
        "kind": "reach",
        "at": now(),
        "via": via,
        "argv": redact_argv(argv),
        "target": target,
        "test": env.get(TEST_VARIABLE) or env.get(PYTEST_TEST_VARIABLE) or "",
        "pid": posix.getpid(),
        "ppid": posix.getppid(),
        "cwd": cwd,
        "identity_vars": sorted(identity_vars),
    }
    record.update(whereabouts(env))
    record.update(extra)
    return record


def environment() -> Mapping[str, str]:
    """The process's environment: `os.environ` once something imported `os` (the process may
    have changed it since it started), else what it started with, decoded as `os` does."""
    os_module = sys.modules.get("os")
    if os_module is not None:
        environ: Mapping[str, str] = os_module.environ
        return environ
    encoding, errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
    return {
        name.decode(encoding, errors): value.decode(encoding, errors)
        for name, value in posix.environ.items()
    }


def whereabouts(environ: Mapping[str, str]) -> dict[str, str]:
    """`phase`, `fixture` and `location` of a reach, where the environment says them.

    The phase is the plugin's (`collection`) or the one pytest appends to its own
    variable (`tests/t.py::test_x (setup)`); the fixture and the test's `FILE:LINE`
    are the plugin's. Absent outside a test session: a record stays as lean as it was.
    """
    found = {}
    current = environ.get(PYTEST_TEST_VARIABLE, "")
    phase = environ.get(PHASE_VARIABLE) or (
        current.rpartition(" (")[2].rstrip(")") if current.endswith(")") else ""
    )
    for key, value in (
        ("phase", phase),
        ("fixture", environ.get(FIXTURE_VARIABLE, "")),
        ("location", environ.get(LOCATION_VARIABLE, "")),
    ):
        if value:
            found[key] = value
    return found


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
            "pid": posix.getpid(),
        }
    )
    written = posix.write(fd, line)
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
    import fcntl  # here: a refuser that hands its record to a keeper never appends

    line = record_line(record)
    fd = posix.open(path, posix.O_RDWR | posix.O_APPEND | posix.O_NOFOLLOW | posix.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        status = posix.fstat(fd)
        if status.st_uid != posix.geteuid():
            raise OSError(f"reach log {path} is owned by uid {status.st_uid}, not ours")
        size = status.st_size
        if size and posix.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line  # a writer died mid-line: keep our record whole
        written = posix.write(fd, line)
        if written != len(line):
            raise OSError(f"short write to reach log ({written} of {len(line)} bytes)")
    finally:
        posix.close(fd)  # closing releases the lock


# -- delivery to the record keeper ---------------------------------------------------------

KEEPER_VARIABLE = "CLOUDGUARD_KEEPER"
MARK_SUFFIX = ".undelivered"  # rendezvous.MARK_SUFFIX, without importing the keeper's side
_MARK_FLAGS = posix.O_RDONLY | posix.O_NOFOLLOW | posix.O_NONBLOCK | posix.O_CLOEXEC
# How long a refuser waits for a keeper to take its record: a loaded host answers in
# milliseconds; only a stopped or flooded keeper takes this long, and that is tampering.
DELIVERY_TIMEOUT = 20.0
# Keepers living in this process, by address: (the pid they live in, their `keep`). A forked
# child inherits the table but not the keeper's thread; it delivers over the socket instead.
_local: dict[str, tuple[int, Callable[[Mapping[str, object]], None]]] = {}


def keeper_name(pid_to_signal: int) -> str:
    """A fresh keeper's name: `cloudguard-keeper-PIDNS-PID-RANDOM`.

    A refuser that cannot deliver signals PID (0: never) when it runs in the keeper's
    own pid namespace (PIDNS): inside the hard seal the same number names another process.
    """
    return f"cloudguard-keeper-{pid_namespace()}-{pid_to_signal}-{posix.urandom(12).hex()}"


def pid_namespace() -> str:
    try:
        return posix.readlink("/proc/self/ns/pid").removeprefix("pid:[").removesuffix("]")
    except OSError:
        return "0"


def register_local(address: str, keep: Callable[[Mapping[str, object]], None]) -> None:
    _local[address] = (posix.getpid(), keep)


def unregister_local(address: str) -> None:
    _local.pop(address, None)


def abstract_name(address: str) -> str:
    """The keeper's abstract name in `address` (`@name`, or a path whose last part it is)."""
    return address.removeprefix("@").rpartition("/")[2]


def deliver(address: str, record: Mapping[str, object]) -> str | None:
    """Hand `record` to the keeper at `address`; None once it holds it, else why not.

    `address`: `@name`, or the keeper's path (`cloudguard.guard.rendezvous`): its
    abstract name first (nobody else can bind it while the keeper holds it), the path
    when that name is not in this network namespace. One SOCK_SEQPACKET message and one
    answer, sent only after the keeper holds the record in memory and wrote it to its
    log. `_socket`, not `socket`: the C module is cheap to import and is not the class
    the in-process socket guard wraps.
    """
    local = _local.get(address)
    if local is not None and local[0] == posix.getpid():
        local[1](record)
        return None
    line = record_line(record)
    problem = _send(b"\0" + abstract_name(address).encode("ascii", "replace"), line)
    if problem is not None and address.startswith("/") and problem[1]:
        problem = _send(address, line)
    return None if problem is None else problem[0]


def _send(where: str | bytes, line: bytes) -> tuple[str, bool] | None:
    """One delivery; None once answered, else why not and whether another way may do."""
    import _socket

    connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET | _socket.SOCK_CLOEXEC)
    try:
        connection.settimeout(DELIVERY_TIMEOUT)
        try:
            connection.connect(where)
        except OSError as error:  # not there (another network namespace): try the next way
            return f"the record keeper cannot be reached ({error.strerror or error})", True
        connection.send(line)
        if connection.recv(16) != b"ok":
            return "the record keeper did not confirm it", False
    except TimeoutError:
        return f"the record keeper did not answer within {DELIVERY_TIMEOUT:.0f} s", False
    except OSError as error:
        return f"the record keeper cannot be reached ({error.strerror or error})", False
    finally:
        connection.close()
    return None


def _report_undelivered(address: str) -> None:
    """Tell a run's keeper that a record could not reach it: the run cannot end green.

    Its mark is opened (the keeper's inotify watch queues the open, wherever the opener
    runs: `cloudguard.guard.rendezvous`), and in the keeper's own pid namespace the
    keeper is signalled too."""
    if address.startswith("/"):
        try:
            mark = posix.open(address + MARK_SUFFIX, _MARK_FLAGS)
        except OSError:  # no mark to open (another mount namespace): the signal is all there is
            mark = -1
        if mark >= 0:
            posix.close(mark)
    _, _, rest = abstract_name(address).partition("cloudguard-keeper-")
    namespace, _, rest = rest.partition("-")
    pid = rest.partition("-")[0]
    if pid.isdigit() and int(pid) and namespace == pid_namespace():
        import _signal

        try:
            posix.kill(int(pid), _signal.SIGUSR1)
        except OSError:
            return  # the keeper is gone: so is the run, and its exit status says how


def keepers(baked: Sequence[str], environ: Mapping[str, str]) -> list[str]:
    """Where to deliver: the keepers baked into a refuser when the seal was made (a child
    that scrubs its environment cannot lose them), and the environment's when it names
    another (a pytest session's own keeper, a nested run's)."""
    return list(dict.fromkeys((*baked, *environ.get(KEEPER_VARIABLE, "").split())))


def record_status(
    record: Mapping[str, object], *, keepers: Sequence[str] = (), log: str = ""
) -> str:
    """Deliver `record` to every keeper (else append it to `log`); say, for the refusal
    message, what happened. Never raises: a refuser that cannot record still refuses."""
    if keepers:
        failed = []
        for address in keepers:
            problem = deliver(address, record)
            if problem:
                _report_undelivered(address)
                failed.append(problem)
        if not failed:
            return f"recorded in {log}" if log else "recorded by the run's record keeper"
        return "NOT recorded: " + "; ".join(failed) + " (the run is marked red)"
    if not log:
        return f"NOT recorded: {LOG_VARIABLE} is not set (no reach log armed)"
    try:
        append(log, record)
    except OSError as error:
        return f"NOT recorded: cannot write reach log {log}: {error.strerror or error}"
    return f"recorded in {log}"

"""The reach log's check side: arm a log, watch it, read what was recorded since, judge it.

Writers only append (cloudguard.guard.reach, the fast path); this
module is everything the process that owns a run or a test session does
with its log: create and arm it (`arm`, `arm_or_continue`, `arm_temporary`,
together `arm_log`), keep a watch on it (`LogWatch`: a replaced, deleted or
shrunk log is a ReachLogError, never a clean check), read the records of
its own span (`ArmedLog.records`), describe each for a terminal and turn
them into the verdict `cloudguard run` and `cloudguard check` give (`check`:
0, 98, or 97 when the alarm cannot be read).

Trust (docs/guard.md, "The reach log can be trusted"): a log is created
O_EXCL|O_NOFOLLOW, mode 0600, and continued only when it is a regular file
of the caller's own. A process that reads a log without keeping it (a
joined session) keeps a `LogWatch`: the log's inode and the largest size
seen. A log that was replaced, deleted, or is shorter than it was seen (a
test that records a reach and truncates the log back to where it started)
is a ReachLogError (97). The verdict itself is the record keeper's
(cloudguard.guard.keeper), from the records it holds in memory.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TextIO

from cloudguard import exit_codes, private_files
from cloudguard.documents import reach_log
from cloudguard.documents.reach_log import ReachLogError
from cloudguard.escape import one_line
from cloudguard.guard import reach

Record = Mapping[str, object]


# -- arming --------------------------------------------------------------------------------


def arm(path: str, *, by: str) -> int:
    """Create `path` as a new armed log (0600, never through a link, never an existing file).

    Returns the offset after the header. Raises UnsafePathError (an OSError) when
    anything already exists at `path`.
    """
    fd = private_files.create_new(path)
    try:
        return reach.write_header(fd, by)
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
            return reach.write_header(fd, by)
    finally:
        os.close(fd)
    return reach_log.read(path).end


def arm_temporary(*, by: str) -> tuple[str, int]:
    """A fresh armed log in the temporary directory: (path, offset after its header)."""
    handle, path = tempfile.mkstemp(prefix="cloudguard-reach-", suffix=".jsonl")  # O_EXCL, 0600
    try:
        return path, reach.write_header(handle, by)
    finally:
        os.close(handle)


@dataclass(frozen=True)
class ArmedLog:
    """A log as one run or session holds it: where its own records begin, and its watch."""

    path: str
    start: int  # byte offset where this run's records begin
    owned: bool  # a temporary log this run made (removed when clean)
    # The arming process's hold on the log: a replaced or shrunk log is 97 (see LogWatch).
    watch: LogWatch

    def records(self, *, since: int | None = None) -> tuple[Record, ...]:
        """The reaches recorded from `since` (default: this run's start) on; ReachLogError
        when the log was replaced or shrunk, or cannot be read."""
        return read_records(self.path, self.start if since is None else since, self.watch)

    def close(self) -> None:
        self.watch.close()


def arm_log(requested: str | None, *, by: str) -> ArmedLog:
    """The log a run or session records to, watched. Raises ReachLogError when an existing
    log is not ours to use (OSError when a temporary one cannot be made).

    `requested`: armed fresh, or continued after its last record if it is already an
    armed log (re-runs keep earlier evidence). None: a temporary log, ours to remove.
    """
    if requested:
        path, start, owned = requested, arm_or_continue(requested, by=by), False
    else:
        (path, start), owned = arm_temporary(by=by), True
    return ArmedLog(path, start, owned, watch=LogWatch(path))


# -- watching ------------------------------------------------------------------------------


class LogWatch:
    """The hold on a log of a process that reads it without keeping it (a joined session):
    a log replaced, deleted or shrunk since it was last seen is caught.

    Keeps the log open (its inode) and a high-water mark, the largest size seen;
    `verify` (two stats) is called before every look. The verdict itself never rests
    on this: it is the record keeper's (`cloudguard.guard.keeper`), which holds every
    record in memory whatever happens to the file.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            self._fd = private_files.open_own(path, os.O_RDONLY)
        except OSError as error:
            raise ReachLogError(f"reach log {path} cannot be watched: {error}") from None
        status = os.fstat(self._fd)
        self._identity = (status.st_dev, status.st_ino)
        self.high_water = status.st_size

    def verify(self) -> int:
        """The log's current size. Raises ReachLogError when it was replaced or shrunk."""
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

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


# -- judging -------------------------------------------------------------------------------


def shown(value: object, limit: int = 300) -> str:
    """A field read back from a record, escaped for the terminal (cloudguard.escape)."""
    return one_line(str(value), limit)


def describe(record: Record) -> str:
    """Who reached what, through which channel, from which test: one line, then details.

    Every field came from outside (argv, the target, the test name, the working
    directory): each is escaped for the terminal (cloudguard.escape).
    """

    if record.get("via") in reach.WRITE_VIAS:
        return describe_write(record)
    argv = record.get("argv")
    command = " ".join(map(str, argv)) if isinstance(argv, list) else ""
    identity = record.get("identity_vars")
    lines = [
        f"{shown(record.get('via'))} reached `{shown(record.get('target') or '?')}`"
        f" from test {shown(record.get('test') or '<none named>')}{whereabouts(record)}"
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


def describe_write(record: Record) -> str:
    """A write where the run must not write: what, where, when it was found, by whom if known.

    `ambient-write: /home/u/.azure/config modified (ambient root ~/.azure), found during
    test tests/t.py::test_x`; the writer's pid and argv when it was caught at the attempt.
    """
    where = "ambient root" if record.get("via") == reach.AMBIENT_WRITE else "checkout"
    test, found = shown(record.get("test") or ""), shown(record.get("found") or "after the run")
    if test:  # "during the test" -> "during test T"; otherwise the test that was running
        found = f"during test {test}" if found == "during the test" else f"{found}, in test {test}"
    lines = [
        f"{shown(record.get('via'))}: {shown(record.get('target'), 2000)} "
        f"{shown(record.get('change'))} ({where} {shown(record.get('root'), 2000)}), found {found}"
    ]
    argv = record.get("argv")
    if isinstance(argv, list) and argv:
        command = shown(" ".join(map(str, argv)), 2000)
        writer = f"pid {shown(record.get('pid'))}, cwd {shown(record.get('cwd'))}"
        lines.append(f"    by {writer}: {command}")
    return "\n".join(lines)


def named(record: Record) -> str:
    """`botocore -> sts.us-east-1.amazonaws.com (sts GetCallerIdentity)`, for a write
    `ambient-write -> /home/u/.azure/config (modified)`: what was reached or written, through
    what, in one escaped line (every field was read back from a log)."""
    via, target, operation = (record.get(key) for key in ("via", "target", "operation"))
    detail = record.get("change") if via in reach.WRITE_VIAS else operation
    return one_line(f"{via} -> {target}" + (f" ({detail})" if detail else ""), 300)


WHEREABOUTS = ("phase", "fixture", "location")  # the record's optional fields that place it


def whereabouts(record: Record) -> str:
    """` during setup, in DeploymentUnitsTest.setUpClass`; ` during collection of t.py`: the
    phase and the fixture of a reach, where its record says them ("" where it says neither)."""
    phase, fixture, location = (str(record.get(key) or "") for key in WHEREABOUTS)
    said = f" during {one_line(phase, 40)}" if phase else ""
    if fixture:
        said += f", in {one_line(fixture, 200)}"
    elif location and not record.get("test"):  # outside any test: where it was collecting
        said += f" of {one_line(location, 300)}"
    return said


def unreadable(error: ReachLogError) -> str:
    """What is said when the alarm itself cannot be read: never a quiet, clean check."""
    return f"cloudguard: {one_line(str(error), 2000)}: the alarm cannot be read, failing closed"


def read_records(path: str, start: int, watch: LogWatch | None = None) -> tuple[Record, ...]:
    """The reaches recorded from byte `start` on, after `watch` (if any) vouched for the log."""
    if watch is not None:
        watch.verify()
    return reach_log.read(path, start=start).reaches


def check(path: str, start: int, err: TextIO, *, watch: LogWatch | None = None) -> int:
    """0 when clean; 98 naming every reach; 97 when the log cannot be read."""
    try:
        records = read_records(path, start, watch)
    except ReachLogError as error:
        err.write(unreadable(error) + "\n")
        return exit_codes.REFUSED_ADMISSION
    return judge(records, path, err)


def judge(
    records: tuple[Record, ...], path: str, err: TextIO, *, tampering: Sequence[str] = ()
) -> int:
    """98 naming every reach and every write where the run must not write; else 97 when the
    record keeper saw tampering; else 0."""
    for what in tampering:
        err.write(f"cloudguard: tampering: {one_line(what, 2000)}\n")
    if records:
        shown = one_line(path, 2000)
        reaches = [r for r in records if r.get("via") not in reach.WRITE_VIAS]
        writes = [r for r in records if r.get("via") in reach.WRITE_VIAS]
        for listed, what in (
            (reaches, "cloud reach(es) refused and recorded"),
            (writes, "write(s) where the run must not write, recorded"),
        ):
            if listed:
                err.write(f"cloudguard: {len(listed)} {what} in {shown}:\n")
            for record in listed:
                err.write("  " + describe(record).replace("\n", "\n  ") + "\n")
        return exit_codes.REACH_REFUSED
    if tampering:
        err.write("cloudguard: the record keeper saw tampering: failing closed\n")
        return exit_codes.REFUSED_ADMISSION
    return exit_codes.CLEAN

"""The record keeper: where a run's reaches are held, and the reach log's only writer.

Every refuser (the shims, the refusing provider, the in-process guards of every
Python child, the hard seal's sink) delivers its record to the keeper and
refuses only once the keeper has answered that it holds it. The keeper keeps
the records in its own memory, writes each as one line of the reach log (the
log is its report, for people and for a pytest worker's per-test look) and
gives the verdict from memory: nothing the judged code does to the log file,
at the same uid, changes the verdict.

The channel (`Channel`) is a SOCK_SEQPACKET unix socket in the abstract
namespace, under a random name (`reach.keeper_name`), because:

- no file is involved that the judged code could delete, replace or chmod (a
  socket path in a directory of the same user's could be swapped under the
  refuser);
- nobody can bind the name while the keeper holds it; whoever learns it can
  only add records (a forged record turns the run red) or send garbage
  (tampering: 97), never take a record back;
- one message per record and one answer per message: a refuser that has its
  answer knows its record is in the keeper's memory, and a record sent to a
  keeper that was stopped waits in the socket until the keeper reads it;
- like every abstract socket it belongs to one network namespace: inside the
  hard seal the supervisor binds the same names and relays to the host's
  keeper over a pipe only the two of them hold (`cloudguard.guard.hard`),
  and tells them to a keeper made inside, which asks before it binds its own
  (`rendezvous.around_seal`: a nested run delivers to them too, and inside a
  seal no keeper sweeps the per-uid directory).

So that a refuser in a namespace of the command's own still reaches it, the
keeper also binds the same socket at a path in a private per-uid directory,
and its address (what refusers are given) is that path; a refuser that
reaches neither opens the keeper's mark, which the keeper watches
(`cloudguard.guard.rendezvous`).

What the keeper cannot prevent it notices, as `tampering`: a malformed
message, a flood of connections, a refuser that could not deliver (it sends
the keeper SIGUSR1 and opens its mark), its socket or mark removed or
changed, the report rewritten under it, its own thread failing. A
run with tampering and no reach is 97, never 0.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import tempfile
import threading
from collections.abc import Mapping

from cloudguard import private_files
from cloudguard.guard import reach, rendezvous
from cloudguard.guard.channel import Channel

Record = Mapping[str, object]


class Keeper:
    """Holds one run's records and writes them to `log`, after its first `start` bytes.

    `signalled`: a refuser that cannot deliver may signal this process (the
    `cloudguard run` keeper catches SIGUSR1; a pytest process does not).
    """

    def __init__(self, log: str, start: int, *, signalled: bool = False) -> None:
        self.log = log
        self.name = reach.keeper_name(os.getpid() if signalled else 0)
        self.records: list[Record] = []
        self.tampering: list[str] = []
        self._lock = threading.Lock()
        self._log_fd = private_files.open_own(log, os.O_RDWR | os.O_APPEND)
        status = os.fstat(self._log_fd)
        self._identity = (status.st_dev, status.st_ino)
        self._before = os.pread(self._log_fd, start, 0)  # what the log held before this run
        self._written: list[bytes] = []
        self._size = len(self._before)  # what the log must measure while the keeper holds it
        self._signalled = signalled
        self.path = ""  # the channel's path ("" when the per-uid directory is not ours)
        self._own_directory = ""  # a private directory made for the path, if it was needed
        self._marks: rendezvous.Marks | None = None
        self._channel: Channel | None = None
        # Inside a hard seal: the keepers its supervisor tells, which a nested run delivers to
        # as well (`enclosing`); a squat there is tampering. Asked first: inside, no sweep.
        self._around_seal, squat = rendezvous.around_seal()
        if squat:
            self.tamper(squat)
        try:
            self._channel = Channel(self._bind_names(), self.receive, self.tamper).start()
            if self.path:
                self._marks = self._watch_marks()
        except OSError:
            if self._channel is not None:
                self._channel.close()
            self._remove_path()
            os.close(self._log_fd)
            raise
        reach.register_local(self.address, self.keep)  # this process's refusers: no socket
        if signalled:
            signal.signal(signal.SIGUSR1, self._undelivered)

    def _bind_names(self) -> list[str]:
        """The abstract name, and the path in the per-uid directory with its mark beside it
        (made before the socket: the watch on it begins once both exist)."""
        home = rendezvous.directory()
        try:
            if home is None:  # squatted: a directory of this keeper's own (no nested run finds it)
                home = self._own_directory = tempfile.mkdtemp(prefix="cloudguard-keeper-")
            path = os.path.join(home, self.name)
            if len(os.fsencode(path)) >= rendezvous.MAX_PATH:  # a long TMPDIR: the name alone
                return [self.name]
            if not self._around_seal:  # inside a seal a probe is a connect the gate records
                rendezvous.sweep(home)
            os.close(os.open(path + rendezvous.MARK_SUFFIX, os.O_CREAT | os.O_EXCL, 0o400))
        except OSError:
            return [self.name]
        self.path = path
        return [self.name, path]

    def enclosing(self) -> list[str]:
        """The keepers of the `cloudguard run`s this process runs inside, by its ancestors'
        pids (`rendezvous.enclosing`), and those of the hard seal it runs inside, as its
        supervisor told them (`rendezvous.around_seal`): a nested run's environment may have
        dropped them."""
        return list(
            dict.fromkeys((*rendezvous.enclosing(reach.pid_namespace()), *self._around_seal))
        )

    def _watch_marks(self) -> rendezvous.Marks | None:
        """The watch on the mark and the socket; None where inotify is out of instances (the
        user's limit, 128 by default): the channel still serves, a refuser that reaches no
        channel then leaves no mark, as before marks (docs/guard.md)."""
        try:
            return rendezvous.Marks(self.path + rendezvous.MARK_SUFFIX, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(self.path + rendezvous.MARK_SUFFIX)  # no mark nobody watches
            return None

    def _remove_path(self) -> None:
        if self.path:
            for leftover in (self.path, self.path + rendezvous.MARK_SUFFIX):
                with contextlib.suppress(OSError):
                    os.unlink(leftover)
        if self._own_directory:
            with contextlib.suppress(OSError):
                os.rmdir(self._own_directory)

    @property
    def address(self) -> str:
        """The channel as refusers are given it: its path, whose last part is the abstract
        name they try first; `@name` alone where no path could be bound (as `ss` shows)."""
        return self.path or "@" + self.name

    def keep(self, record: Record) -> None:
        """Hold `record` and write it to the log (under the lock, before any answer)."""
        line = reach.record_line(record)
        with self._lock:
            self.records.append(dict(record))
            self._written.append(line)
            try:
                self._size += _append(self._log_fd, line)
            except OSError as error:
                self.tamper(f"the reach log could not be written ({error.strerror or error})")

    def receive(self, message: bytes) -> bool:
        """One delivered message: a reach record is kept; anything else is tampering."""
        try:
            record = json.loads(message)
        except ValueError:
            record = None
        if not (isinstance(record, dict) and record.get("kind") == "reach"):
            self.tamper("a malformed message arrived on the record keeper's channel")
            return False
        self.keep(record)
        return True

    def tamper(self, what: str) -> None:
        if what not in self.tampering:
            self.tampering.append(what)

    def _undelivered(self, _signum: int, _frame: object) -> None:
        self.tamper("a refuser could not deliver its record to the keeper (stopped or flooded)")

    def report_intact(self) -> bool:
        """Whether the log is still the file the keeper writes, at the size it wrote (two stats:
        cheap enough for every test). What it cannot see, `close` reads in full."""
        with self._lock:
            try:
                at_path = os.lstat(self.log)
                intact = (at_path.st_dev, at_path.st_ino) == self._identity and (
                    os.fstat(self._log_fd).st_size == self._size
                )
            except OSError:
                intact = False
        if not intact:
            self._altered()
        return intact

    def _altered(self) -> None:
        self.tamper("the reach log was altered while the run was on (the keeper rewrote it)")

    def close(self) -> None:
        """Take what is queued, stop, put the report right if it was altered. Idempotent;
        the records stay readable."""
        if self._channel is None:
            return
        self._channel.close()
        self._channel = None
        reach.unregister_local(self.address)
        if self._marks is not None:  # read before the keeper removes them itself
            for what in self._marks.read():
                self.tamper(what)
            self._marks.close()
            self._marks = None
        self._remove_path()
        if self._signalled:  # the verdict is given from here on: a late report changes nothing
            signal.signal(signal.SIGUSR1, signal.SIG_IGN)
        if not self._report_holds_every_line():
            self._altered()
            self._rewrite_report()
        os.close(self._log_fd)

    def _report_holds_every_line(self) -> bool:
        """The log must still hold what it held before, then every line the keeper wrote."""
        try:
            if (_inode(self.log), os.fstat(self._log_fd).st_size) != (
                self._identity[1],
                self._size,
            ):
                return False
            data = os.pread(self._log_fd, self._size, 0)
        except OSError:
            return False
        return data == self._before + b"".join(self._written)

    def _rewrite_report(self) -> None:
        """The keeper's own record of the run, back where the report was (best effort: the
        verdict is the keeper's either way)."""
        report = self._before + b"".join(self._written)
        try:
            if _inode(self.log) == self._identity[1]:
                os.ftruncate(self._log_fd, 0)
                _append(self._log_fd, report)
            else:  # replaced or deleted: the report goes back to its path
                private_files.write_private(self.log, report)
        except OSError:
            return


def _inode(path: str) -> int | None:
    try:
        return os.lstat(path).st_ino
    except FileNotFoundError:
        return None


def _append(fd: int, data: bytes) -> int:
    """Append `data` whole; the bytes written."""
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
    return len(data)

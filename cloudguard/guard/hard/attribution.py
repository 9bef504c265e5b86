"""Which process sent a packet: its socket in /proc/net, the process holding it, its test.

The sink runs in the same network namespace as the command, so sock_diag
finds the sending socket's inode by its addresses (`diag`), and
/proc/PID/fd names the process that holds it. Only the
supervisor's descendants are searched (it is their subreaper, so orphans
stay in the tree): a host's thousands of processes are never scanned on
the refusal's path. A `Snapshot` reads each process's descriptors at most
once for a whole batch of packets, and searches the processes that sent recently
first, stopping at the holder.

A sender that exited before the sink read its packet (a datagram sent on
the way out) has no socket left to find: the gate (`gate`) saw its connect
or send while it was blocked in the system call, described it then, and
left it in `Flows` under the flow's ports. A record whose sender is found
neither way says why (`unattributed`).

What is read of a sender is read afresh for each batch: its argv, cwd,
ppid and test may all change between two attempts (an exec keeps the pid and
its start time, a chdir or a new test keeps the process), so no Sender
outlives its batch. Only what cannot change is remembered across batches: the
redaction of an argv, by the argv itself (`recorded_argv`), and a parent's
number inside the command's pid namespace, while a pidfd shows the process it
was read for still holds its number (`Parents`).
"""

from __future__ import annotations

import os
import signal
import threading

from cloudguard.guard import reach
from cloudguard.guard.hard import running
from cloudguard.guard.hard.diag import SocketTable
from cloudguard.guard.redaction import redact_argv

TEST_VARIABLES = (b"CLOUDGUARD_TEST=", b"PYTEST_CURRENT_TEST=")
RECENT = 32
FLOWS = 4096  # flows the gate described, newest kept
EXITED = "the sender had exited before the sink looked it up"
NO_GATE = (
    "the sender had exited before the sink looked it up (this host's kernel has no seccomp "
    "user notification to describe it while it sent)"
)
NO_SOCKET = "no socket to look up for this protocol"
PARENTS = 64  # parents whose number inside the sink holds (each by a pidfd)
REDACTIONS = 256  # argvs whose redaction is remembered (then forgotten all at once)
REMEMBERED_ARGV_BYTES = 8192  # a longer command line is redacted each time, never held
_redactions: dict[tuple[bytes, ...], list[str]] = {}
_read = running.read_file  # /proc through plain descriptors (why: `read_file`)


class Sender:
    """The sending process as recorded; a plain class (dataclasses would import inspect)."""

    __slots__ = ("argv", "cwd", "pid", "ppid", "test", "unattributed")

    def __init__(
        self,
        pid: int | None = None,
        ppid: int | None = None,
        argv: list[bytes] | None = None,
        cwd: str = "<unknown>",
        test: str = "",
        unattributed: str = "",  # why pid is None
    ) -> None:
        self.pid, self.ppid, self.argv, self.cwd, self.test = pid, ppid, argv or [], cwd, test
        self.unattributed = unattributed


def reach_entry(
    via: str, target: str, sender: Sender, extra: dict[str, object]
) -> dict[str, object]:
    """The reach record of something the sink or the gate refused, naming its sender."""
    environ = {reach.TEST_VARIABLE: sender.test} if sender.test else {}
    entry = reach.reach_record(via=via, argv=(), target=target, environ=environ)
    entry["argv"] = recorded_argv(sender.argv)  # what reach_record makes of it, remembered
    entry.update(extra, pid=sender.pid, ppid=sender.ppid, cwd=sender.cwd)
    if sender.unattributed:
        entry["unattributed"] = sender.unattributed
    return entry


def recorded_argv(argv: list[bytes]) -> list[str]:
    """`redact_argv(argv)`, as a record carries it. Redaction is half the cost of a record and
    a function of the argv alone, so it is remembered by the argv itself (its every byte, read
    afresh for each refusal): a process refused again with the same command line is not
    redacted again, and any other command line, of the same program or not, is its own."""
    key = tuple(argv)
    found = _redactions.get(key)
    if found is None:
        found = redact_argv(argv)
        if sum(map(len, argv)) <= REMEMBERED_ARGV_BYTES:
            if len(_redactions) >= REDACTIONS:
                _redactions.clear()
            _redactions[key] = found
    return list(found)


def flow_address(address: str) -> str:
    """An IPv4-mapped IPv6 address as the IPv4 packet on cg0 shows it."""
    return address[7:] if address.startswith("::ffff:") and "." in address else address


class Flows:
    """Senders the gate described, by (protocol, local port, remote address, remote port); and
    the process the gate is connecting each socket for, by the socket's inode, while it does."""

    def __init__(self) -> None:
        self._senders: dict[tuple[int, int, str, int], Sender] = {}
        self._connecting: dict[int, int] = {}
        self._lock = threading.Lock()  # the gate's threads remember; the sink only looks up
        self.described = False  # whether a gate describes senders at all (else: NO_GATE)

    def connecting(self, inode: int, process: int) -> None:
        """`process` (the caller the gate is answering) is connecting the socket `inode`: its
        SYN names its sender without a search of every process's descriptors."""
        with self._lock:
            self._connecting[inode] = process

    def connected(self, inode: int) -> None:
        with self._lock:
            self._connecting.pop(inode, None)

    def connector(self, inode: int) -> int | None:
        return self._connecting.get(inode)

    def remember(self, protocol: int, port: int, remote: tuple[str, int], sender: Sender) -> None:
        key = (protocol, port, flow_address(remote[0]), remote[1])
        with self._lock:
            self._senders.pop(key, None)
            self._senders[key] = sender
            while len(self._senders) > FLOWS:
                del self._senders[next(iter(self._senders))]

    def knows(self, protocol: int, port: int, remote: tuple[str, int]) -> bool:
        return (protocol, port, flow_address(remote[0]), remote[1]) in self._senders

    def find(self, protocol: int, local: tuple[str, int], remote: tuple[str, int]) -> Sender:
        found = self._senders.get((protocol, local[1], flow_address(remote[0]), remote[1]))
        return found or Sender(unattributed=EXITED if self.described else NO_GATE)


def descendants(root: int) -> list[int]:
    """Every living descendant of `root`, from /proc (children before grandchildren)."""
    found: list[int] = []
    pending = [root]
    while pending:
        pid = pending.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            children = [int(child) for child in _read(f"/proc/{pid}/task/{task}/children").split()]
            found.extend(children)
            pending.extend(children)
    return found


def _sockets_of(pid: int) -> list[str]:
    """The socket inodes `pid` holds open."""
    directory = f"/proc/{pid}/fd"
    try:
        descriptors = os.listdir(directory)
    except OSError:
        return []
    inodes = []
    for fd in descriptors:
        try:
            link = os.readlink(f"{directory}/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.append(link[8:-1])
    return inodes


def _status_ids(pid: int) -> dict[bytes, int]:
    """NSpid (the last column: the number in the process's own pid namespace) and PPid, from
    one read of /proc/PID/status (looked up by their lines, not by parsing all fifty)."""
    status = _read(f"/proc/{pid}/status")
    found: dict[bytes, int] = {}
    for key in (b"NSpid", b"PPid"):
        at = status.find(b"\n" + key + b":")  # the first line is Name: (its value escaped)
        if at >= 0:
            end = status.find(b"\n", at + 1)
            value = status[at + len(key) + 2 : end if end >= 0 else len(status)].split()
            if value:
                found[key] = int(value[-1])
    return found


class Parents:
    """The number in the command's pid namespace of each parent lately described, by its number
    here; for the sink's thread alone. A number is reused once its process is reaped, so each
    is held with a pidfd of the process it was read for, and served only while a signal 0
    through that pidfd finds the process (a zombie's number is not reused yet either); the
    parent of a process just read lives, so a number whose holder lives is that parent. A
    process gone, or a pidfd refused, is read from /proc as before."""

    def __init__(self, limit: int = PARENTS) -> None:
        self.limit = limit
        self._known: dict[int, tuple[int, int]] = {}  # pid here -> (its pidfd, pid inside)

    def inner(self, parent: int) -> int | None:
        known = self._known.get(parent)
        if known is not None:
            if _lives(known[0]):
                return known[1]
            self._forget(parent)
        try:
            pidfd = os.pidfd_open(parent)
        except OSError:
            return _status_ids(parent).get(b"NSpid")
        inner = _status_ids(parent).get(b"NSpid")
        if inner is None or not _lives(pidfd):  # gone meanwhile: what was read, not held
            os.close(pidfd)
            return inner
        while len(self._known) >= self.limit:
            self._forget(next(iter(self._known)))
        self._known[parent] = (pidfd, inner)
        return inner

    def _forget(self, parent: int) -> None:
        os.close(self._known.pop(parent)[0])

    def close(self) -> None:
        while self._known:
            self._forget(next(iter(self._known)))


def _lives(pidfd: int) -> bool:
    """Whether the process of `pidfd` still holds its number (signal 0: nothing is sent)."""
    try:
        signal.pidfd_send_signal(pidfd, 0)
    except OSError:
        return False
    return True


def _inner_ids(pid: int, parents: Parents | None = None) -> tuple[int | None, int | None]:
    """(pid, ppid) as the command sees them, as its own refusers record them: numbers in its
    pid namespace. None where /proc no longer says."""
    ids = _status_ids(pid)
    parent = ids.get(b"PPid")
    if not parent:
        return ids.get(b"NSpid"), None
    if parents is None:
        return ids.get(b"NSpid"), _status_ids(parent).get(b"NSpid")
    return ids.get(b"NSpid"), parents.inner(parent)


def _test_in(environ: bytes) -> str:
    """The test an environment block names: its first CLOUDGUARD_TEST (which names the test),
    else its last PYTEST_CURRENT_TEST (which adds the phase); "" if neither. Found by the
    variables' names at the start of an entry, not by splitting every entry."""
    block = b"\0" + environ
    at = block.find(b"\0" + TEST_VARIABLES[0])
    if at < 0:
        at = block.rfind(b"\0" + TEST_VARIABLES[1])
        if at < 0:
            return ""
    start = block.index(b"=", at) + 1
    end = block.find(b"\0", start)
    return block[start : end if end >= 0 else len(block)].decode("utf-8", "backslashreplace")


def describe(pid: int, seal_root: str, parents: Parents | None = None) -> Sender:
    """A living process as a record names it (pid and ppid as the command sees them).
    `parents`: the sink's numbers of parents (the gate's threads read each afresh)."""
    argv = _read(f"/proc/{pid}/cmdline").split(b"\0")[:-1]
    inner, inner_parent = _inner_ids(pid, parents)
    # A pytest process's own test, in the file it named by its own (inner) pid.
    test = running.test_of(seal_root, inner or pid) if seal_root else ""
    if not test:
        test = _test_in(_read(f"/proc/{pid}/environ"))
    try:
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        cwd = "<unknown>"
    return Sender(pid=inner, ppid=inner_parent, argv=argv, cwd=cwd, test=test)


class Snapshot:
    """/proc as it is now, read lazily, at most once per table, for one batch of packets."""

    def __init__(
        self,
        table: SocketTable,
        recent: list[int],
        seal_root: str = "",
        root: int | None = None,
        flows: Flows | None = None,
        parents: Parents | None = None,
    ) -> None:
        self.table = table
        self.flows = flows or Flows()
        self.parents = parents
        self.seal_root = seal_root
        self.root = root or os.getpid()
        self.recent = recent  # pids that sent lately, newest first; updated here
        self._holders: dict[str, int] = {}
        self._unscanned: list[int] | None = None
        self._senders: dict[int, Sender] = {}

    def _holder(self, inode: str) -> int | None:
        if self._unscanned is None:
            living = list(reversed(descendants(self.root)))  # newest first
            recent = [pid for pid in self.recent if pid in living]  # never a reused pid
            self._unscanned = [*recent, *(pid for pid in living if pid not in recent)]
        while inode not in self._holders and self._unscanned:
            scanned = self._unscanned.pop(0)
            for held in _sockets_of(scanned):
                self._holders.setdefault(held, scanned)
        holder = self._holders.get(inode)
        if holder is not None:
            if holder in self.recent:
                self.recent.remove(holder)
            self.recent.insert(0, holder)
            del self.recent[RECENT:]
        return holder

    def sender(self, protocol: int, local: tuple[str, int], remote: tuple[str, int]) -> Sender:
        """The process that owns the socket local -> remote, if it still lives."""
        inode = self.table.inode(protocol, local, remote)
        pid = (self.flows.connector(inode) or self._holder(str(inode))) if inode else None
        if pid is None:
            return self.flows.find(protocol, local, remote)
        if pid not in self._senders:
            self._senders[pid] = describe(pid, self.seal_root, self.parents)
        return self._senders[pid]

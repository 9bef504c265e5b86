"""Where a run's record keeper is found from any namespace, and the mark of a record that was not.

The keeper's abstract socket (`cloudguard.guard.channel`) belongs to one
network namespace: a refuser the command runs in a namespace of its own
(`unshare -rn az ...`, a container, a test harness that isolates the
network) cannot reach it. So every keeper also binds a filesystem socket
in a private per-uid directory, `/tmp/cloudguard-keepers-UID/` (0700,
refused unless it is ours), named like its abstract name. A connect through
a path does not depend on the network namespace, nor on the pid or user
namespace of the caller (the directory's check is on the real uid, which
`unshare -r` maps, not changes); a refuser tries the abstract name first
(nobody can bind it while the keeper holds it) and the path when that
fails.

A refuser that reaches neither leaves a mark: it opens the keeper's
`.undelivered` file, which the keeper watches with inotify. The open is an
event queued in the keeper's own descriptor the moment it happens: the
command cannot take it back, and removing, renaming or changing the mark
(or the socket) beforehand is an event too. The keeper reads its queue
before it gives the verdict; any event is tampering (97). What this cannot
do, documented in docs/guard.md: a refuser that sees neither the keeper's
network namespace nor this directory (a mount namespace that hides /tmp,
and a network namespace of its own) leaves no mark. In the keeper's own pid
namespace it still signals the keeper (`reach._report_undelivered`).

Nested runs: a keeper of `cloudguard run` has its pid in its name, so a
`cloudguard run` inside it whose environment dropped `CLOUDGUARD_KEEPER`
finds it by walking its own ancestors (`/proc/PID/stat`), a fact the
environment cannot drop (`enclosing`). Inside `cloudguard run --hard` the
ancestors end at the seal's pid 1 and name none of the host's pids; there
the seal's supervisor tells its keepers' addresses on a fixed abstract
name of the seal's network namespace (`channel.SEAL_KEEPERS`), which it
binds before the command starts and holds until the command's init exited:
nothing inside can bind it, remove it or answer in its place
(`around_seal`). An answer from a process the caller can see (a squat in a
network namespace of the command's own) is tampering: a supervisor is
outside the command's pid namespace, so the kernel names no pid for it.
Inside a seal a keeper sweeps nothing (`sweep`): a connect to a socket not
bound inside is the seal's gate's to refuse and record (`hard-unix`), and
another run's keeper, or what a killed one left, is not the command's reach.

Stdlib only (ctypes for inotify): the keeper's side; the refusers' side of
this is in `cloudguard.guard.reach` (no import of this module there).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import socket
import stat
import struct
import tempfile

from cloudguard.guard.channel import SEAL_KEEPERS

MARK_SUFFIX = ".undelivered"  # reach.MARK_SUFFIX: the refusers name it without importing this
# What the keeper's inotify watches on its mark and its socket: the refuser's open, and
# anything done to either file (removed, renamed, changed, its mode changed).
IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_OPEN = 0x20
IN_MOVE_SELF = 0x800
IN_DELETE_SELF = 0x400
IN_Q_OVERFLOW = 0x4000
MARK_EVENTS = IN_OPEN | IN_MODIFY | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF
SOCKET_EVENTS = IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF
_EVENT = struct.Struct("iIII")
MAX_ANCESTORS = 64  # a process tree deeper than this is not a run inside runs
MAX_PATH = 108  # sun_path, with its terminating NUL
SO_PEERCRED = getattr(socket, "SO_PEERCRED", 17)
_PEER = struct.Struct("3i")  # struct ucred: pid, uid, gid, as the caller's namespaces see them


def directory() -> str | None:
    """The per-uid directory keepers bind their sockets in: made 0700 when missing, refused
    (None) unless it is a real directory of ours that nobody else can enter."""
    base = "/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir()
    path = os.path.join(base, f"cloudguard-keepers-{os.geteuid()}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        status = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.geteuid() or status.st_mode & 0o077:
        return None  # squatted, or widened: an abstract socket alone
    return path


class Marks:
    """The inotify watch a keeper holds on its mark and its socket. Events queue in the
    kernel until `read`; the keeper reads them once, before its verdict."""

    def __init__(self, mark: str, sock: str) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self._watches: dict[int, str] = {}
        for path, mask, what in ((mark, MARK_EVENTS, "mark"), (sock, SOCKET_EVENTS, "socket")):
            wd = self._libc.inotify_add_watch(self.fd, os.fsencode(path), mask)
            if wd < 0:
                error = ctypes.get_errno()
                os.close(self.fd)
                raise OSError(error, f"inotify_add_watch {path}")
            self._watches[wd] = what

    def read(self) -> list[str]:
        """What happened to the mark or the socket since the watch began, said once each."""
        found: list[str] = []
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return found
            offset = 0
            while offset + _EVENT.size <= len(data):
                wd, mask, _, length = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size + length
                said = _said(self._watches.get(wd), mask)
                if said and said not in found:
                    found.append(said)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _said(what: str | None, mask: int) -> str:
    """What one event says. IN_IGNORED (a watch gone with its inode: the keeper's own close
    of a socket removed earlier) says nothing the earlier event did not."""
    if mask & IN_Q_OVERFLOW:
        return "the keeper's watch on its channel overflowed (a flood of events)"
    if what == "mark" and mask & IN_OPEN:
        return "a refuser could not deliver its record to the keeper (it left its mark)"
    if what == "mark" and mask & MARK_EVENTS:
        return "the keeper's undelivered mark was changed, moved or removed"
    if what == "socket" and mask & SOCKET_EVENTS:
        return "the keeper's channel socket was changed, moved or removed"
    return ""


def sweep(home: str) -> None:
    """Remove what keepers that were killed left in `home`: a socket nobody listens on
    (ECONNREFUSED: a live keeper, even a flooded one, never answers that), and its mark.
    Not called inside a hard seal (the keeper's `_bind_names`): the probe is a connect."""
    try:
        names = os.listdir(home)
    except OSError:
        return
    for name in names:
        if not name.startswith("cloudguard-keeper-") or name.endswith(MARK_SUFFIX):
            continue
        path = os.path.join(home, name)
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
        try:
            probe.setblocking(False)
            probe.connect(path)
        except ConnectionRefusedError:
            for leftover in (path, path + MARK_SUFFIX):
                with contextlib.suppress(OSError):
                    os.unlink(leftover)
        except OSError:
            pass  # busy, or not a socket of ours: left as it is
        finally:
            probe.close()


# -- nested runs -----------------------------------------------------------------------------


def enclosing(pid_namespace: str) -> list[str]:
    """The channel paths of the `cloudguard run` keepers this process runs inside (nearest
    first), found by its ancestors' pids, not by its environment. A keeper whose socket
    no longer answers (a run that was killed) is not one."""
    home = directory()
    if home is None:
        return []
    try:
        names = os.listdir(home)
    except OSError:
        return []
    found = []
    for pid in ancestors():
        prefix = f"cloudguard-keeper-{pid_namespace}-{pid}-"
        for name in names:
            if name.startswith(prefix) and not name.endswith(MARK_SUFFIX):
                path = os.path.join(home, name)
                if _answers(path):
                    found.append(path)
    return found


def around_seal() -> tuple[list[str], str]:
    """The keepers of the hard seal this process runs inside, as its supervisor tells them
    on `SEAL_KEEPERS` ([] outside a seal), and what was wrong with the answer ("" if
    nothing). A process of another user's there is never a seal of ours: not asked."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
    try:
        probe.settimeout(1.0)
        try:
            probe.connect(b"\0" + SEAL_KEEPERS.encode("ascii"))
        except OSError:
            return [], ""  # nobody binds the name: no hard seal around this network namespace
        pid, uid, _ = _PEER.unpack(probe.getsockopt(socket.SOL_SOCKET, SO_PEERCRED, _PEER.size))
        if uid != os.geteuid():
            return [], ""
        if pid != 0:
            return [], (
                f"the hard seal's keepers were told by pid {pid}, a process the command can "
                "see: a squat (a seal's supervisor is outside the command's pid namespace)"
            )
        told = probe.recv(1 << 16)
    except OSError as error:
        return [], f"the hard seal did not tell its keepers ({error.strerror or error})"
    finally:
        probe.close()
    addresses = told.decode("utf-8", "surrogateescape").split()
    if not addresses or not all(map(_is_keeper_address, addresses)):
        return [], "the hard seal told something that is not a list of keepers"
    return addresses, ""


def _is_keeper_address(address: str) -> bool:
    """`@cloudguard-keeper-...`, or an absolute path whose last part is such a name."""
    if not address.startswith(("@", "/")):
        return False
    return address.removeprefix("@").rpartition("/")[2].startswith("cloudguard-keeper-")


def ancestors() -> list[int]:
    """This process's ancestors' pids, parent first, as its pid namespace numbers them."""
    found: list[int] = []
    pid = os.getppid()
    while pid > 1 and len(found) < MAX_ANCESTORS:
        found.append(pid)
        pid = _parent(pid)
    return found


def _parent(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat_line = handle.read()
    except OSError:
        return 0
    # `PID (COMM) STATE PPID ...`: the command name may hold spaces and parentheses.
    fields = stat_line.rpartition(b")")[2].split()
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else 0


def _answers(path: str) -> bool:
    try:
        status = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISSOCK(status.st_mode) or status.st_uid != os.geteuid():
        return False
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
    try:
        probe.settimeout(1.0)
        probe.connect(path)  # an empty connection: the keeper closes it and keeps nothing
    except OSError:
        return False
    finally:
        probe.close()
    return True

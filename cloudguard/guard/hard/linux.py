"""The few Linux system calls the hard seal makes itself (ctypes, stdlib only).

ctypes rather than util-linux `unshare`/`mount`: the supervisor enters the
namespaces in its own process and so can name the exact refusal (errno) in
its one-line cause, and each mount costs a system call instead of a
process start (`run --hard` has a start-up budget of 50 ms). The system
calls Python does not wrap (`pidfd_getfd`, `openat2`, `seccomp`) are made by
number: from 424 on, numbers are the same on every architecture.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct

CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MNT_DETACH = 0x2
PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4
PR_SET_NAME = 15
SYS_PIDFD_GETFD = 438
SYS_OPENAT2 = 437
RESOLVE_IN_ROOT = 0x10
# seccomp(2) is older than the unified numbers: one per architecture the gate knows.
SYS_SECCOMP = {"x86_64": 317, "aarch64": 277}

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _check(result: int, what: str) -> int:
    if result < 0:  # every call here returns -1 and sets errno on failure
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")
    return result


def machine() -> str:
    return platform.machine()


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def map_single_ids(inside_uid: int, outside_uid: int, inside_gid: int, outside_gid: int) -> None:
    """Map one user and one group, as an unprivileged process may (setgroups denied first)."""
    with open("/proc/self/setgroups", "w") as handle:
        handle.write("deny")
    with open("/proc/self/uid_map", "w") as handle:
        handle.write(f"{inside_uid} {outside_uid} 1")
    with open("/proc/self/gid_map", "w") as handle:
        handle.write(f"{inside_gid} {outside_gid} 1")


def mount(source: str | None, target: str, kind: str | None, flags: int, data: str = "") -> None:
    encoded = [None if v is None else os.fsencode(v) for v in (source, target, kind, data)]
    _check(_libc.mount(*encoded[:3], ctypes.c_ulong(flags), encoded[3]), f"mount {target}")


def detach(target: str) -> None:
    """Unmount `target` lazily: gone from this namespace at once, whatever still uses it."""
    _check(_libc.umount2(os.fsencode(target), MNT_DETACH), f"umount {target}")


def become_subreaper() -> None:
    """Orphaned descendants are re-parented to this process, not to the host's init."""
    _check(_libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "prctl(PR_SET_CHILD_SUBREAPER)")


def set_dumpable(dumpable: bool) -> None:
    """Non-dumpable: no process of the same user may ptrace this one, read its memory or
    descriptors, or write its /proc files. Inherited by fork; an exec resets it."""
    _check(_libc.prctl(PR_SET_DUMPABLE, int(dumpable), 0, 0, 0), "prctl(PR_SET_DUMPABLE)")


def set_name(name: str) -> None:
    """The process's name in /proc/PID/comm (its argv stays the one it was started with)."""
    _check(_libc.prctl(PR_SET_NAME, os.fsencode(name)[:15], 0, 0, 0), "prctl(PR_SET_NAME)")


def pidfd_getfd(pidfd: int, fd: int) -> int:
    """A duplicate of descriptor `fd` of the process `pidfd` names (the same open file)."""
    return _check(_libc.syscall(SYS_PIDFD_GETFD, pidfd, fd, 0), "pidfd_getfd")


def open_in_root(root: int, path: bytes, flags: int) -> int:
    """openat2(root, path) resolving every absolute path and symlink inside `root`."""
    how = ctypes.create_string_buffer(struct.pack("=QQQ", flags | os.O_CLOEXEC, 0, RESOLVE_IN_ROOT))
    return _check(_libc.syscall(SYS_OPENAT2, root, path, how, 24), "openat2")


def seccomp(operation: int, flags: int, argument: ctypes.Array[ctypes.c_char] | None) -> int:
    """seccomp(2): the result (a descriptor for a new listener), or OSError."""
    number = SYS_SECCOMP.get(machine())
    if number is None:
        raise OSError(0, f"seccomp: no system call number known for {machine()}")
    return _check(_libc.syscall(number, operation, flags, argument), "seccomp")


def connect(fd: int, address: bytes) -> int:
    """connect(2) with the address as raw bytes: 0, or the errno (never raises)."""
    result = _libc.connect(fd, address, len(address))
    return ctypes.get_errno() if result != 0 else 0

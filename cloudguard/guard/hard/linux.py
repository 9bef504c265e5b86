"""The few Linux system calls the hard seal makes itself: unshare(2) and mount(2).

ctypes rather than util-linux `unshare`/`mount`: the supervisor enters the
namespaces in its own process and so can name the exact refusal (errno) in
its one-line cause, and each mount costs a system call instead of a
process start (`run --hard` has a start-up budget of 50 ms).
"""

from __future__ import annotations

import ctypes
import os

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
PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")


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


def become_subreaper() -> None:
    """Orphaned descendants are re-parented to this process, not to the host's init."""
    _check(_libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "prctl(PR_SET_CHILD_SUBREAPER)")


def set_dumpable(dumpable: bool) -> None:
    """Non-dumpable: no process of the same user may ptrace this one, read its memory or
    descriptors, or write its /proc files. Inherited by fork; an exec resets it."""
    _check(_libc.prctl(PR_SET_DUMPABLE, int(dumpable), 0, 0, 0), "prctl(PR_SET_DUMPABLE)")

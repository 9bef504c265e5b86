"""Nothing the command started outlives `cloudguard run`.

The run becomes a child subreaper before it starts the command, so every
process the command leaves behind (a daemon that double-forked, a
`setsid` child) is re-parented to the run instead of the host's init. When
the command has exited, whatever is still a descendant of the run is
killed, waited for and named: a leftover could otherwise act after the
verdict (reach for a cloud, or pad the log of a later run in the same temp
directory). Linux; elsewhere the command's own process group is all that
can be found.
"""

from __future__ import annotations

import os
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4
# SIGKILL is delivered asynchronously: how long to wait for the kernel to end the stragglers.
REAP_TIMEOUT = 5.0
MAX_ROUNDS = 100  # a fork bomb outpacing the kills is not waited on forever


def _prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    """Orphans of the command re-parent to this process. False where the kernel cannot."""
    return sys.platform.startswith("linux") and _prctl(PR_SET_CHILD_SUBREAPER, 1)


def keep_out_of_reach() -> bool:
    """Make this process non-dumpable: a process of the same user can no longer ptrace it,
    read its memory or descriptors, or write its /proc files (oom_score_adj). It can still
    signal it; a killed run is not a green run (its exit status says how it died)."""
    return sys.platform.startswith("linux") and _prctl(PR_SET_DUMPABLE, 0)


def _children(pid: int) -> list[int]:
    """Raises OSError when /proc cannot be read for another cause than the process being gone
    (no descriptor left to read it with, say): what cannot be looked for cannot be stopped."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except (FileNotFoundError, ProcessLookupError):
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found.extend(int(child) for child in handle.read().split())
        except (FileNotFoundError, ProcessLookupError):
            continue
    return found


def descendants(root: int | None = None) -> list[int]:
    """Every living descendant of `root` (this process by default), parents before children."""
    found: list[int] = []
    pending = [os.getpid() if root is None else root]
    while pending:
        children = _children(pending.pop(0))
        found.extend(children)
        pending.extend(children)
    return found


def describe(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = handle.read().split(b"\0")[:-1]
    except OSError:
        argv = []
    from cloudguard.escape import one_line

    shown = " ".join(a.decode("utf-8", "backslashreplace") for a in argv) or "?"
    return f"pid {pid} `{one_line(shown, 120)}`"


def stop_all() -> list[str]:
    """SIGKILL every descendant (stopped ones too), wait for them, and name them. OSError
    when they cannot be looked for, or keep appearing.

    Looked for again after each round: a process may fork between being listed and
    being killed, and its child, re-parented to us, is only found by the next look.
    """
    named: dict[int, str] = {}
    for _ in range(MAX_ROUNDS):
        targets = descendants()
        if not targets:
            return list(named.values())
        for pid in targets:
            named.setdefault(pid, describe(pid))
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
        _reap(targets)
    raise OSError(f"processes kept appearing after {MAX_ROUNDS} rounds of stopping them")


def _reap(pids: list[int]) -> None:
    """Collect the killed children (re-parented ones are ours to wait for) within a bound."""
    deadline = time.monotonic() + REAP_TIMEOUT
    pending = set(pids)
    while pending and time.monotonic() < deadline:
        for pid in list(pending):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # not our child (a grandchild): gone when /proc says so
                done = pid if not os.path.exists(f"/proc/{pid}") else 0
            if done:
                pending.discard(pid)
        if pending:
            time.sleep(0.01)

"""Stop the hard seal's supervisor while the command floods it (run by a test, as the host).

Started in a test's outer namespace (root of the user namespace the hard seal's are made in):
it waits for the command's `ready` file, stops the supervisor (its sink then reads nothing),
optionally shrinks cg0's queue (as the namespace's owner may), says `stopped`, and lets the
supervisor go on once the command says `sent` or, when a FIFO `alive` exists, once every
writer of it (the command) has exited.

    python pause_sink.py ROOT_PID HANDSHAKE_DIR [QUEUE]
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from cloudguard.guard.hard.attribution import descendants


def wait_for(path: str) -> None:
    while not os.path.exists(path):
        time.sleep(0.01)


def comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as handle:
        return int(handle.read().rpartition(")")[2].split()[1])


def supervisor(root: int) -> int:
    """The supervisor under `root` (its spawner and the command's init are forks of it and
    carry its name: the one whose parent does not)."""
    for pid in descendants(root):
        if comm(pid) == "cg-supervisor" and comm(parent(pid)) != "cg-supervisor":
            return pid
    raise LookupError("no hard seal supervisor under the test's shell")


def main() -> None:
    signal.alarm(60)
    root, handshake = int(sys.argv[1]), sys.argv[2]
    queue = sys.argv[3] if len(sys.argv) > 3 else ""
    wait_for(os.path.join(handshake, "ready"))
    pid = supervisor(root)
    os.kill(pid, signal.SIGSTOP)
    if queue:
        subprocess.run(["nsenter", f"--net=/proc/{pid}/ns/net", "ip", "link", "set", "cg0",
                        "txqueuelen", queue], check=True)  # fmt: skip
    open(os.path.join(handshake, "stopped"), "w").close()
    alive = os.path.join(handshake, "alive")
    if os.path.exists(alive):
        with open(alive, "rb") as fifo:  # EOF once every writer (the command) has exited
            fifo.read()
    else:
        wait_for(os.path.join(handshake, "sent"))
    os.kill(pid, signal.SIGCONT)


if __name__ == "__main__":
    main()

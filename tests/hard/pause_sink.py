"""Stop the hard seal's supervisor while the command floods it (run by a test, as the host).

Started in a test's outer namespace (root of the user namespace the hard seal's are made in):
it waits for the command's `ready` (a word in its progress file), stops the supervisor (its
sink then reads nothing), optionally shrinks cg0's queue (as the namespace's owner may), says
`stopped`, and lets the supervisor go on once the command says `sent` or, when a FIFO
`alive` exists, once every writer of it (the command) has exited.

    python pause_sink.py ROOT_PID HANDSHAKE_DIR [QUEUE]
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from cloudguard.guard.hard.attribution import descendants


def wait_for(handshake: str, word: str) -> None:
    """Until the command has said `word` in its progress file (it writes there through a
    descriptor opened before the stop: an open for writing would wait for the stopped gate)."""
    progress = os.path.join(handshake, "progress")
    while True:
        try:
            with open(progress) as handle:
                if word in handle.read().split():
                    return
        except FileNotFoundError:
            pass
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
    alive = os.path.join(handshake, "alive")
    # Open for reading at once, so the command's open for writing (before `ready`) returns.
    fifo = os.open(alive, os.O_RDONLY | os.O_NONBLOCK) if os.path.exists(alive) else None
    wait_for(handshake, "ready")
    pid = supervisor(root)
    os.kill(pid, signal.SIGSTOP)
    if queue:
        subprocess.run(["nsenter", f"--net=/proc/{pid}/ns/net", "ip", "link", "set", "cg0",
                        "txqueuelen", queue], check=True)  # fmt: skip
    open(os.path.join(handshake, "stopped"), "w").close()
    if fifo is not None:
        os.set_blocking(fifo, True)
        while os.read(fifo, 4096):  # EOF once every writer (the command) has exited
            pass
    else:
        wait_for(handshake, "sent")
    os.kill(pid, signal.SIGCONT)


if __name__ == "__main__":
    main()

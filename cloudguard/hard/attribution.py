"""Which process sent a packet: its socket in /proc/net, the process holding it, its test.

The sink runs in the same network namespace as the command, so
/proc/net/{tcp,udp}{,6} list the sending socket (matched by its local
port), and /proc/PID/fd names the process that holds it. Best effort: a
process that already exited leaves the record without argv and pid.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

TEST_VARIABLES = (b"CLOUDGUARD_TEST=", b"PYTEST_CURRENT_TEST=")


@dataclass(frozen=True)
class Sender:
    pid: int | None = None
    ppid: int | None = None
    argv: list[bytes] = field(default_factory=list)
    cwd: str = "<unknown>"
    test: str = ""


def _socket_inode(protocol: str, local_port: int, remote_port: int) -> str | None:
    wanted = f":{local_port:04X}"
    for table in (protocol, protocol + "6"):
        try:
            with open(f"/proc/net/{table}", "rb") as handle:
                lines = handle.read().decode("ascii", "replace").splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            columns = line.split()
            if len(columns) < 10 or not columns[1].endswith(wanted):
                continue
            remote = int(columns[2].rpartition(":")[2], 16)
            if remote in (remote_port, 0):
                return columns[9]
    return None


def _holder(inode: str) -> int | None:
    link = f"socket:[{inode}]"
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        directory = f"/proc/{entry}/fd"
        try:
            for fd in os.listdir(directory):
                if os.readlink(f"{directory}/{fd}") == link:
                    return int(entry)
        except OSError:
            continue
    return None


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def sender(protocol: str, local_port: int, remote_port: int) -> Sender:
    """The process that owns the socket `protocol` local_port -> remote_port, if it still lives."""
    inode = _socket_inode(protocol, local_port, remote_port)
    pid = _holder(inode) if inode and inode != "0" else None
    if pid is None:
        return Sender()
    argv = [arg for arg in _read(f"/proc/{pid}/cmdline").split(b"\0")[:-1]]
    test = ""
    for variable in _read(f"/proc/{pid}/environ").split(b"\0"):
        if variable.startswith(TEST_VARIABLES):
            test = variable.partition(b"=")[2].decode("utf-8", "backslashreplace")
            if variable.startswith(TEST_VARIABLES[0]):
                break
    stat = _read(f"/proc/{pid}/stat").rpartition(b")")[2].split()
    try:
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        cwd = "<unknown>"
    ppid = int(stat[1]) if len(stat) > 1 else None
    return Sender(pid=pid, ppid=ppid, argv=argv, cwd=cwd, test=test)

"""Which test a pytest process is running, told to the hard seal's sink through the seal dir.

The sink reads a sender's test from its environment (`CLOUDGUARD_TEST`,
inherited by every subprocess a test starts). The pytest process itself
sets that variable after it started, which /proc/PID/environ does not show,
so under the hard seal the plugin also keeps `<seal>/running/<pid>` naming
its current test (one file per process: each xdist worker its own). Outside
the hard seal (no `running/` directory in the seal) marking costs one
cached lookup. Stdlib only.
"""

from __future__ import annotations

import os

from cloudguard import private_files

RUNNING = "running"
_SEAL_DIR_VARIABLE = "CLOUDGUARD_SEAL_DIR"  # cloudguard.guard.seal.SEAL_DIR_VARIABLE (not imported)
_hard: dict[str, bool] = {}  # seal dir -> whether it is a hard seal's (looked up once)


def running_dir(seal_root: str) -> str:
    return os.path.join(seal_root, RUNNING)


def mark(nodeid: str | None) -> None:
    """Name (or, with None, clear) the test this process is running. Never raises."""
    seal_root = os.environ.get(_SEAL_DIR_VARIABLE, "")
    if not seal_root:
        return
    if seal_root not in _hard:
        _hard[seal_root] = os.path.isdir(running_dir(seal_root))
    if not _hard[seal_root]:
        return
    path = os.path.join(running_dir(seal_root), str(os.getpid()))
    try:
        if nodeid is None:
            os.unlink(path)
        else:
            private_files.write_private(path, nodeid)
    except OSError:
        pass  # attribution is best effort; the record itself does not depend on it


def test_of(seal_root: str, pid: int) -> str:
    """The test `pid` (in the command's pid namespace) named last; "" if none. Read as a text
    file is (UTF-8, universal newlines), through a plain descriptor (`read_file`): the sink
    asks this for every refused process, mostly of one that is not pytest (no file: one
    failed open)."""
    try:
        text = read_file(os.path.join(running_dir(seal_root), str(pid))).decode("utf-8")
    except UnicodeDecodeError:
        return ""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def read_file(path: str) -> bytes:
    """The whole file, b"" if it cannot be read. Plain descriptors, not `open`: a buffered file
    costs three more system calls (fstat, isatty, lseek), each a handover of the interpreter's
    lock to another of the supervisor's threads, on every refusal."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        chunks = []
        while chunk := os.read(fd, 65536):  # to the end: a short read is not one
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return b""
    finally:
        os.close(fd)

"""Files cloudguard opens by a name someone else may have chosen: one open, then checks on it.

Every file cloudguard creates or rewrites (reach logs, reap logs, `--output`
reports and plans) and every configuration it reads goes through here, and
each is judged by what was opened, never by the path looked at before: the
name is opened once (`O_NOFOLLOW`: a link planted in a shared directory
would make us create, truncate or read a file of the planter's choosing;
`O_NONBLOCK`: a FIFO or a device must never hang cloudguard in `open`), and
then the descriptor is checked with `fstat` before any I/O that could block:
a regular file, and for anything cloudguard writes, the caller's own (a file
someone else owns could be read, truncated or swapped by them). New files
are created 0600. Stdlib only: the reach log's writers import it.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat

_WRITE = os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC
# A FIFO opened for writing with no reader, or for reading with no writer, blocks in
# open(2) forever; with O_NONBLOCK the open returns (or fails with ENXIO) at once.
_NOT_BLOCKING = os.O_NONBLOCK | os.O_CLOEXEC


class UnsafePathError(OSError):
    """A path that is not ours to use: a symlink, not a regular file, or another user's."""


def create_new(path: str | os.PathLike[str], *, mode: int = 0o600) -> int:
    """A file descriptor on a file this call created (never an existing file or a link)."""
    try:
        return os.open(path, _WRITE | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        raise UnsafePathError(f"{os.fspath(path)} already exists") from None


def open_regular(
    path: str | os.PathLike[str],
    flags: int = os.O_RDONLY,
    *,
    follow: bool = False,
    dir_fd: int | None = None,
) -> int:
    """A blocking descriptor on a regular file at `path`, opened once and checked by `fstat`.

    Never hangs on a FIFO or a device (opened O_NONBLOCK, refused by type before
    any read or write). `follow`: a symbolic link at the last component is
    followed (readers of a path the operator named); by default it is refused.
    """
    extra = 0 if follow else os.O_NOFOLLOW
    try:
        fd = os.open(path, flags | extra | _NOT_BLOCKING, dir_fd=dir_fd)
    except OSError as error:
        if error.errno == errno.ELOOP and not follow:
            raise UnsafePathError(f"{os.fspath(path)} is a symbolic link") from None
        if error.errno == errno.ENXIO:  # a FIFO with no reader (or a socket): not a file
            raise UnsafePathError(f"{os.fspath(path)} is not a regular file") from None
        raise
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise UnsafePathError(f"{os.fspath(path)} is not a regular file")
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_own(path: str | os.PathLike[str], flags: int = os.O_RDWR) -> int:
    """A file descriptor on an existing regular file the caller owns, never through a link."""
    fd = open_regular(path, flags)
    try:
        check_own(fd, path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def check_own(fd: int, path: str | os.PathLike[str]) -> os.stat_result:
    """The file's status, or UnsafePathError when it is not a regular file of the caller's."""
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode):
        raise UnsafePathError(f"{os.fspath(path)} is not a regular file")
    if status.st_uid != os.geteuid():
        raise UnsafePathError(
            f"{os.fspath(path)} is owned by uid {status.st_uid}, not by the user running "
            f"cloudguard (uid {os.geteuid()})"
        )
    return status


def open_private(path: str | os.PathLike[str]) -> int:
    """A write descriptor on `path`, emptied: created 0600, or an own file truncated.

    Raises UnsafePathError for a symlink, a non-regular file (a FIFO too: never
    waited on) or another user's file (nothing is truncated before the check),
    OSError for the rest.
    """
    try:
        fd = create_new(path)
    except UnsafePathError:
        fd = open_own(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_private(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write `data` as the whole content of `path` (opened as `open_private` does)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd = open_private(path)
    try:
        view = memoryview(raw)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)

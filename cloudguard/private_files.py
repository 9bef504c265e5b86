"""Files cloudguard writes, opened so that nobody else can choose what they are.

Every file cloudguard creates or rewrites (reach logs, reap logs, `--output`
reports and plans) goes through here. The last path component is never
followed as a symlink (a link planted in a shared directory would make us
create or truncate a file of the planter's choosing), and an existing file
is used only when it is a regular file owned by the user running cloudguard
(a file someone else owns could be read, truncated or swapped by them).
New files are created 0600. Stdlib only: the reach log's writers import it.
"""

from __future__ import annotations

import os
import stat

_WRITE = os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePathError(OSError):
    """A path that is not ours to write: a symlink, not a regular file, or another user's."""


def create_new(path: str | os.PathLike[str], *, mode: int = 0o600) -> int:
    """A file descriptor on a file this call created (never an existing file or a link)."""
    try:
        return os.open(path, _WRITE | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        raise UnsafePathError(f"{os.fspath(path)} already exists") from None


def open_own(path: str | os.PathLike[str], flags: int = os.O_RDWR) -> int:
    """A file descriptor on an existing regular file the caller owns, never through a link."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        if os.path.islink(path):
            raise UnsafePathError(f"{os.fspath(path)} is a symbolic link") from None
        raise error
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

    Raises UnsafePathError for a symlink, a non-regular file or another user's
    file (nothing is truncated before the check), OSError for the rest.
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

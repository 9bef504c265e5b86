"""One apply at a time: a lock per plan digest and per resource, in a directory the user owns.

Two applies of one plan started together would both read, verify and act on
every item. An exclusive `flock` on `plan-<digest>.lock` makes the second one
stop before anything is read; one on `resource-<hash of its id>.lock`, held
from the live read to the logged outcome, keeps two different plans naming
one resource from acting on it at once. `flock` (not `fcntl` record locks)
because it belongs to the open file, so two applies in one process exclude
each other too, and the kernel drops it when the process dies: a crashed
apply leaves no stale lock.

The directory is `$XDG_RUNTIME_DIR/cloudguard/reap-locks`, else
`~/.cache/cloudguard/reap-locks`, made 0700; one that is not a directory of
the caller's, or that others may write, is refused (someone else could hold
or swap our locks). Lock files go through `private_files` like every file
cloudguard writes.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import stat
from pathlib import Path

from cloudguard import private_files


class LockError(Exception):
    """The lock directory or a lock file cannot be used: nothing is done (75)."""


def lock_directory() -> Path:
    base = os.environ.get("XDG_RUNTIME_DIR") or str(Path.home() / ".cache")
    directory = Path(base) / "cloudguard" / "reap-locks"
    try:
        directory.mkdir(parents=True, mode=0o700, exist_ok=True)
        status = os.lstat(directory)
    except OSError as exc:
        raise LockError(f"cannot make the lock directory {directory}: {exc}") from exc
    if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.geteuid():
        raise LockError(f"lock directory {directory} is not a directory of this user's")
    if status.st_mode & 0o022:
        raise LockError(f"lock directory {directory} is writable by others")
    return directory


class Lock:
    """An exclusive, non-blocking lock on one name; `held` says whether it was taken."""

    def __init__(self, directory: Path, name: str) -> None:
        self.path = directory / name
        try:
            try:
                self._fd = private_files.create_new(self.path)
            except private_files.UnsafePathError:
                self._fd = private_files.open_own(self.path, os.O_WRONLY)
        except OSError as exc:
            raise LockError(f"cannot open lock {self.path}: {exc}") from exc
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self.held = True
        except BlockingIOError:
            self.held = False

    def release(self) -> None:
        os.close(self._fd)  # closing drops the flock

    def __enter__(self) -> Lock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def plan_lock(directory: Path, digest: str) -> Lock:
    return Lock(directory, f"plan-{digest.removeprefix('sha256:')}.lock")


def resource_lock(directory: Path, provider: str, resource_id: str) -> Lock:
    key = f"{provider}\0{resource_id.casefold()}".encode()
    return Lock(directory, f"resource-{hashlib.sha256(key).hexdigest()}.lock")

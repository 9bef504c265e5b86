"""One apply at a time: a lock per plan digest and per resource, for everyone who can act.

Two applies of one plan started together would both read, verify and act on
every item. An exclusive `flock` on `plan-<digest>.lock` makes the second one
stop before anything is read; one on `resource-<hash of its id>.lock`, held
from the live read to the logged outcome, keeps two different plans naming
one resource from acting on it at once. `flock` (not `fcntl` record locks)
because it belongs to the open file, so two applies in one process exclude
each other too, and the kernel drops it when the process dies: a crashed
apply leaves no stale lock.

One directory whatever the environment: `<home>/.cache/cloudguard/reap-locks`,
where `<home>` is the account's home in the password database (`pwd`, by the
effective uid), never `$HOME` or `$XDG_RUNTIME_DIR`, which differ between a
login shell and cron (two directories, two "only" applies, two DELETEs).
`[reap] lock-directory` (a trusted cloudguard.toml key: it decides which
locks are honoured) names another, for every apply that may act on the same
resources. The directory is made 0700; one that is not a directory of the
caller's, or that others may read or write, or whose parent others may write
(they could swap it), is refused: nothing is done (75). Lock files go
through `private_files` like every file cloudguard writes.

A lock file binds one host. When the history store is shared (PostgreSQL),
each lock is also taken in the store (`SharedLocks`: a session advisory lock
on the same name), so two hosts running the scheduled reap cannot both act:
the one that does not get it does nothing to that plan or resource.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import pwd
import stat
from pathlib import Path
from typing import Protocol

from cloudguard import private_files


class LockError(Exception):
    """The lock directory or a lock cannot be used: nothing is done (75)."""


def account_home() -> Path:
    """The effective user's home as the password database has it: the same for every
    shell, cron job and service of the account, whatever their environment."""
    try:
        return Path(pwd.getpwuid(os.geteuid()).pw_dir)
    except KeyError as exc:
        raise LockError(f"uid {os.geteuid()} has no entry in the password database") from exc


def default_lock_directory() -> Path:
    return account_home() / ".cache" / "cloudguard" / "reap-locks"


def lock_directory(configured: Path | None = None) -> Path:
    """The lock directory (`configured`, or the account's default), made if need be, and
    checked to be this user's alone."""
    directory = configured or default_lock_directory()
    try:
        directory.mkdir(parents=True, mode=0o700, exist_ok=True)
        status = os.lstat(directory)
        parent = os.lstat(directory.parent)
    except OSError as exc:
        raise LockError(f"cannot make the lock directory {directory}: {exc}") from exc
    if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.geteuid():
        raise LockError(f"lock directory {directory} is not a directory of this user's")
    if status.st_mode & 0o077:
        raise LockError(
            f"lock directory {directory} is not private (mode {stat.S_IMODE(status.st_mode):o}):"
            " others may read or write it; make it 0700"
        )
    if parent.st_mode & 0o022 and not parent.st_mode & stat.S_ISVTX:
        raise LockError(
            f"the lock directory's parent {directory.parent} is writable by others: "
            "they could put another directory in its place"
        )
    return directory


class SharedLocks(Protocol):
    """Locks every host of a shared store sees (the history on PostgreSQL)."""

    location: str

    def try_lock(self, name: str) -> bool:
        """Take the lock named `name` without waiting; False: another session holds it."""

    def unlock(self, name: str) -> None: ...


class Lock:
    """An exclusive, non-blocking lock on one name; `held` says whether it was taken, and
    `where` who holds it when it was not."""

    def __init__(self, directory: Path, name: str, shared: SharedLocks | None = None) -> None:
        self.path = directory / name
        self.where = str(self.path)
        self._name = name
        self._shared: SharedLocks | None = None
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
        if self.held and shared is not None:
            self._take_shared(shared)

    def _take_shared(self, shared: SharedLocks) -> None:
        try:
            taken = shared.try_lock(self._name)
        except Exception as exc:  # a store that cannot say: not "free"
            self.release()
            raise LockError(f"cannot take lock {self._name} in {shared.location}: {exc}") from exc
        if taken:
            self._shared = shared
        else:
            self.held = False
            self.where = f"{self._name} in {shared.location} (another host or apply)"

    def release(self) -> None:
        if self._shared is not None:
            shared, self._shared = self._shared, None
            # A store that went away took its session, and the lock, with it.
            with contextlib.suppress(Exception):
                shared.unlock(self._name)
        if self._fd >= 0:
            os.close(self._fd)  # closing drops the flock
            self._fd = -1

    def __enter__(self) -> Lock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class Locks:
    """Where an apply's locks are taken: a directory of this host's, and the shared store's."""

    def __init__(self, directory: Path, shared: SharedLocks | None = None) -> None:
        self.directory = directory
        self.shared = shared

    def plan(self, digest: str) -> Lock:
        return plan_lock(self.directory, digest, self.shared)

    def resource(self, provider: str, resource_id: str) -> Lock:
        return resource_lock(self.directory, provider, resource_id, self.shared)


def plan_lock(directory: Path, digest: str, shared: SharedLocks | None = None) -> Lock:
    return Lock(directory, f"plan-{digest.removeprefix('sha256:')}.lock", shared)


def resource_lock(
    directory: Path, provider: str, resource_id: str, shared: SharedLocks | None = None
) -> Lock:
    key = f"{provider}\0{resource_id.casefold()}".encode()
    return Lock(directory, f"resource-{hashlib.sha256(key).hexdigest()}.lock", shared)

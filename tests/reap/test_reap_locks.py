"""The lock directory and lock files: ours, one for every environment, or nothing is done."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest
from named_checks import broken
from second_uid import refused_to_the_second_user, require_a_second_user

from cloudguard.reap.locks import (
    LockError,
    Locks,
    default_lock_directory,
    lock_directory,
    plan_lock,
)

_DIRECTORY_OF_THIS_ENVIRONMENT = (
    "import sys; from cloudguard.reap.locks import default_lock_directory; "
    "sys.stdout.write(str(default_lock_directory()))"
)


def _directory_seen_from(env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _DIRECTORY_OF_THIS_ENVIRONMENT],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_a_login_shell_and_cron_use_one_lock_directory(tmp_path: Path) -> None:
    """A login shell (XDG_RUNTIME_DIR set, HOME its own) and cron (neither, another HOME) are
    two environments of one account: they must name one directory, the account's own."""
    base = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "HOME")}
    login = {**base, "XDG_RUNTIME_DIR": str(tmp_path / "run"), "HOME": str(tmp_path / "a")}
    cron = {**base, "HOME": str(tmp_path / "b")}

    seen = {_directory_seen_from(login), _directory_seen_from(cron)}

    account = pwd.getpwuid(os.geteuid()).pw_dir
    assert seen == {f"{account}/.cache/cloudguard/reap-locks"}, broken(
        "one-lock-directory-for-every-environment",
        f"two environments of one account name lock directories {sorted(seen)}",
    )
    assert default_lock_directory() == Path(account, ".cache", "cloudguard", "reap-locks")


def test_a_planted_symlink_for_the_lock_directory_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "run" / "reap-locks").symlink_to(elsewhere)  # run: the conftest's, 0700

    with pytest.raises(LockError, match="not a directory of this user's"):
        lock_directory(tmp_path / "run" / "reap-locks")


@pytest.mark.parametrize("mode", [0o777, 0o755, 0o750])
def test_a_lock_directory_that_is_not_private_is_refused(tmp_path: Path, mode: int) -> None:
    directory = lock_directory(tmp_path / "run" / "reap-locks")
    directory.chmod(mode)

    with pytest.raises(LockError, match="is not private"):
        lock_directory(directory)


def test_a_lock_directory_whose_parent_others_may_write_is_refused(tmp_path: Path) -> None:
    parent = tmp_path / "open"
    parent.mkdir()
    parent.chmod(0o777)  # anyone could rename ours away and put theirs in its place

    with pytest.raises(LockError, match=r"parent .* is writable by others"):
        lock_directory(parent / "reap-locks")


def test_a_lock_is_exclusive_and_released_on_close(tmp_path: Path) -> None:
    directory = lock_directory(tmp_path / "run")
    with plan_lock(directory, "sha256:ab") as first, plan_lock(directory, "sha256:ab") as second:
        assert first.held and not second.held
    with plan_lock(directory, "sha256:ab") as again:
        assert again.held


class _Store:
    """A shared store's locks, as another host sees them."""

    location = "postgresql://store/history"

    def __init__(self, taken_elsewhere: set[str], fails: bool = False) -> None:
        self.taken_elsewhere = taken_elsewhere
        self.fails = fails
        self.held: list[str] = []

    def try_lock(self, name: str) -> bool:
        if self.fails:
            raise OSError("server closed the connection")
        if name in self.taken_elsewhere:
            return False
        self.held.append(name)
        return True

    def unlock(self, name: str) -> None:
        self.held.remove(name)


def test_a_lock_another_host_holds_in_the_store_is_not_held_here(tmp_path: Path) -> None:
    name = "plan-ab.lock"
    store = _Store({name})
    locks = Locks(lock_directory(tmp_path / "run"), store)

    with locks.plan("sha256:ab") as lock:
        assert not lock.held and "postgresql://store/history" in lock.where
    with locks.resource("azure", "/x") as free:
        assert free.held and store.held == [free.path.name]
    assert store.held == []  # released with the file lock


def test_a_store_that_cannot_take_a_lock_is_a_lock_error(tmp_path: Path) -> None:
    locks = Locks(lock_directory(tmp_path / "run"), _Store(set(), fails=True))

    with pytest.raises(LockError, match="server closed the connection"):
        locks.plan("sha256:ab")
    with plan_lock(tmp_path / "run", "sha256:ab") as again:  # the file lock was let go
        assert again.held


def test_another_users_lock_directory_is_refused(second_user: Path) -> None:
    """Met by the second user (uid 65534): a lock directory of ours, which it may not trust
    (whoever owns it can remove the locks in it)."""
    require_a_second_user()
    theirs = second_user / "run" / "reap-locks"
    theirs.mkdir(parents=True, mode=0o700)

    refused_to_the_second_user(
        second_user,
        "from pathlib import Path; from cloudguard.reap.locks import LockError as Refused, "
        "lock_directory",
        f"lock_directory(Path({str(theirs)!r}))",
        check="another-users-lock-directory-refused",
        what="another user's lock directory was used",
        why="not a directory of this user's",
    )

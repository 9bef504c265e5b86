"""The lock directory and lock files: ours, or nothing is done."""

from __future__ import annotations

from pathlib import Path

import pytest
from second_uid import refused_to_the_second_user, require_a_second_user

from cloudguard.reap.locks import LockError, lock_directory, plan_lock


def test_a_planted_symlink_for_the_lock_directory_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "run" / "cloudguard").mkdir(parents=True)
    (tmp_path / "run" / "cloudguard" / "reap-locks").symlink_to(elsewhere)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))

    with pytest.raises(LockError, match="not a directory of this user's"):
        lock_directory()


def test_a_lock_directory_others_may_write_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    directory = lock_directory()
    directory.chmod(0o777)

    with pytest.raises(LockError, match="writable by others"):
        lock_directory()


def test_a_lock_is_exclusive_and_released_on_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    directory = lock_directory()
    with plan_lock(directory, "sha256:ab") as first, plan_lock(directory, "sha256:ab") as second:
        assert first.held and not second.held
    with plan_lock(directory, "sha256:ab") as again:
        assert again.held


def test_another_users_lock_directory_is_refused(second_user: Path) -> None:
    """Met by the second user (uid 65534): a lock directory of ours, which it may not trust
    (whoever owns it can remove the locks in it)."""
    require_a_second_user()
    theirs = second_user / "run" / "cloudguard" / "reap-locks"
    theirs.mkdir(parents=True, mode=0o755)

    refused_to_the_second_user(
        second_user,
        "from cloudguard.reap.locks import LockError as Refused, lock_directory",
        "lock_directory()",
        check="another-users-lock-directory-refused",
        what="another user's lock directory was used",
        why="not a directory of this user's",
        env={"XDG_RUNTIME_DIR": str(second_user / "run")},
    )

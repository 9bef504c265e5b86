"""The lock directory and lock files: ours, or nothing is done."""

from __future__ import annotations

from pathlib import Path

import pytest

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

"""Files cloudguard writes: never through a planted symlink, never another user's, 0600."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from second_uid import another_users_file, refused_to_the_second_user

from cloudguard.private_files import UnsafePathError, create_new, open_own, write_private


def test_write_private_creates_0600(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    write_private(target, "{}")
    assert target.read_text() == "{}"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_write_private_rewrites_own_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("a much longer earlier content")
    write_private(target, "new")
    assert target.read_text() == "new"


def test_write_private_refuses_a_symlink_and_leaves_its_target(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    link = tmp_path / "out.json"
    link.symlink_to(victim)
    with pytest.raises(UnsafePathError, match="symbolic link"):
        write_private(link, "overwritten")
    assert victim.read_text() == "precious"


def test_dangling_symlink_creates_nothing(tmp_path: Path) -> None:
    link = tmp_path / "log.jsonl"
    link.symlink_to(tmp_path / "chosen-by-someone-else")
    with pytest.raises(UnsafePathError):
        write_private(link, "x")
    with pytest.raises(UnsafePathError):
        create_new(link)
    assert not (tmp_path / "chosen-by-someone-else").exists()


def test_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(UnsafePathError, match="not a regular file"):
        open_own(fifo, os.O_RDWR)


def test_another_users_file_is_refused_before_truncation(second_user: Path) -> None:
    """Written to by the second user (uid 65534): a file of ours it could write (0666)."""
    theirs = another_users_file(second_user, "theirs.json", b"their content")

    refused_to_the_second_user(
        second_user,
        "from cloudguard.private_files import UnsafePathError as Refused, write_private",
        'write_private("theirs.json", "mine")',
        check="another-users-file-refused",
        what="another user's file was written",
    )
    assert theirs.read_text() == "their content"

"""Where cloudguard.toml is looked for, and which files are trusted (cloudguard.project_file).

Both readers (the seal's registry and the audit's `[audit]` table) use the
same finder; a refused file is exit 97 naming it from either command.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from guard_helpers import cloudguard, minimal_env
from named_checks import broken
from second_uid import another_users_file, refused_to_the_second_user

from cloudguard.project_file import UntrustedFileError, find_project_file, read_project_file

BODY = '[seal.names]\nVAULT_TOKEN = "secret store"\n'


def discover(start: Path) -> None:
    """Find and read the nearest file as the commands do (what was opened is what is judged)."""
    found = find_project_file(start, {})
    assert found is not None
    read_project_file(found, discovered=True)


def plant(directory: Path, body: str = BODY) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "cloudguard.toml"
    path.write_text(body)
    path.chmod(0o644)
    return path


def test_found_from_a_subdirectory_up_to_the_repository_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    project = plant(repo)
    nested = repo / "a" / "b"
    nested.mkdir(parents=True)

    assert find_project_file(nested, {"HOME": str(tmp_path / "nohome")}) == project


def test_a_worktrees_git_file_marks_the_root_too(tmp_path: Path) -> None:
    repo = tmp_path / "worktree"
    repo.mkdir()
    (repo / ".git").write_text("gitdir: /elsewhere\n")
    plant(tmp_path)  # above the worktree: not the project's

    assert find_project_file(repo, {"HOME": str(tmp_path / "nohome")}) is None


def test_never_above_the_repository_root(tmp_path: Path) -> None:
    plant(tmp_path)  # a shared parent (say /srv/builds)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)

    found = find_project_file(repo, {"HOME": str(tmp_path / "nohome")})
    assert found is None, broken(
        "never-above-the-repository", f"a file above the repository root was read: {found}"
    )


def test_outside_a_repository_only_the_working_directory(tmp_path: Path) -> None:
    plant(tmp_path)
    work = tmp_path / "work"
    work.mkdir()

    found = find_project_file(work, {"HOME": str(tmp_path / "nohome")})
    assert found is None, broken(
        "never-above-the-working-directory", f"a file above the working directory was read: {found}"
    )
    assert find_project_file(tmp_path, {"HOME": str(tmp_path / "nohome")}) is not None


def test_home_is_searched_last(tmp_path: Path) -> None:
    home_file = plant(tmp_path / "home")
    work = tmp_path / "work"
    work.mkdir()

    assert find_project_file(work, {"HOME": str(tmp_path / "home")}) == home_file
    nearer = plant(work)
    assert find_project_file(work, {"HOME": str(tmp_path / "home")}) == nearer


def test_a_group_or_other_writable_file_is_refused_naming_it(tmp_path: Path) -> None:
    path = plant(tmp_path)
    path.chmod(0o664)

    with pytest.raises(UntrustedFileError, match="writable by group or others"):
        discover(tmp_path)


def test_a_symlink_is_refused(tmp_path: Path) -> None:
    target = plant(tmp_path / "elsewhere")
    (tmp_path / "cloudguard.toml").symlink_to(target)

    with pytest.raises(UntrustedFileError, match="symbolic link"):
        discover(tmp_path)


def test_another_users_file_is_refused_naming_it(second_user: Path) -> None:
    """Found by the second user (uid 65534) in its working directory: a file of ours."""
    path = another_users_file(second_user, "cloudguard.toml", BODY.encode())
    path.chmod(0o644)  # not writable by others: only the owner check refuses it

    refused_to_the_second_user(
        second_user,
        "from pathlib import Path\n"
        "from cloudguard.project_file import UntrustedFileError as Refused, find_project_file, "
        "read_project_file",
        "read_project_file(find_project_file(Path.cwd(), {}), discovered=True)",
        check="another-users-file-refused",
        what="another user's cloudguard.toml was trusted",
    )


@pytest.mark.parametrize(
    "command",
    [
        ("run", "--", "true"),
        ("audit", "--inventory", "-"),
        ("doctor",),
    ],
)
def test_every_command_refuses_an_untrusted_file_with_97(tmp_path: Path, command) -> None:
    path = plant(tmp_path, BODY + '\n[audit]\nformat = "json"\n')
    path.chmod(0o666)

    result = cloudguard(*command, env=minimal_env(tmp_path), cwd=tmp_path)

    assert f"{path}: writable by group or others" in result.stderr, broken(
        "the-untrusted-file-is-refused", f"the untrusted file was not refused: {result.stderr}"
    )
    assert result.returncode == 97, f"an untrusted cloudguard.toml was read: {result.stderr}"

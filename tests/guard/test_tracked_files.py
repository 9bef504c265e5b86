"""Tracked files: the run is blamed for what it changed in the checkout, not for how it was."""

from __future__ import annotations

import sys
from pathlib import Path

from guard_helpers import cloudguard, git, minimal_env
from named_checks import broken


def checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    for name in ("a.txt", "b.txt", "c.txt"):
        (repo / "src" / name).write_text(f"{name}\n")
    (repo / ".gitignore").write_text("build/\n*.log\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "the checkout")
    return repo


def run_python(repo: Path, tmp_path: Path, code: str, *options: str) -> tuple[int, str]:
    result = cloudguard(
        "run", *options, "--", sys.executable, "-c", code, env=minimal_env(tmp_path), cwd=repo
    )
    return result.returncode, result.stderr


def test_a_checkout_dirty_before_the_run_is_not_blamed_on_it(tmp_path: Path) -> None:
    repo = checkout(tmp_path)
    (repo / "src" / "a.txt").write_text("edited by the developer\n")
    (repo / "src" / "b.txt").unlink()
    (repo / "notes.md").write_text("untracked, the developer's\n")

    code, stderr = run_python(repo, tmp_path, "open('src/c.txt').read()")

    assert "tracked-write" not in stderr, broken(
        "a-dirty-checkout-is-not-blamed-on-the-run", f"the developer's edits were named:\n{stderr}"
    )
    assert code == 0, stderr


def test_a_dirty_file_changed_further_and_a_deletion_are_named(tmp_path: Path) -> None:
    repo = checkout(tmp_path)
    (repo / "src" / "a.txt").write_text("edited by the developer\n")

    code, stderr = run_python(
        repo, tmp_path,
        "import os; open('src/a.txt', 'a').write('and by the run\\n'); os.remove('src/c.txt')",
    )  # fmt: skip

    for named in ("src/a.txt modified", "src/c.txt deleted"):
        assert f"tracked-write: {named} (checkout {repo})" in stderr, broken(
            "a-further-change-and-a-deletion-are-named", f"{named} was not named:\n{stderr}"
        )
    assert code == 98, stderr
    assert "b.txt" not in stderr


def test_ignored_paths_and_the_runs_own_log_are_not_writes(tmp_path: Path) -> None:
    repo = checkout(tmp_path)
    code, stderr = run_python(
        repo, tmp_path,
        "import os; os.makedirs('build'); open('build/x.o', 'w'); open('run.log', 'w')",
        "--log", str(repo / "reach.jsonl"),
    )  # fmt: skip

    assert code == 0, stderr
    assert (repo / "reach.jsonl").exists()


def test_a_hook_written_into_the_checkouts_git_directory_is_an_ambient_write(
    tmp_path: Path,
) -> None:
    """A hook runs later, outside any seal: the checkout's git metadata is an ambient root."""
    repo = checkout(tmp_path)

    code, stderr = run_python(
        repo, tmp_path, "open('.git/hooks/pre-commit', 'w').write('#!/bin/sh\\ncurl evil\\n')"
    )

    hook = repo / ".git" / "hooks" / "pre-commit"
    shown = f"ambient-write: {hook} created (ambient root {repo / '.git' / 'hooks'})"
    assert shown in stderr, broken("a-hook-written-is-named", f"not named: {shown}\n{stderr}")
    assert code == 98, stderr


def test_outside_a_checkout_nothing_asks_git(tmp_path: Path) -> None:
    where = tmp_path / "plain"
    where.mkdir()
    env = minimal_env(tmp_path, PATH="/nonexistent")  # no git to find, and none is needed

    result = cloudguard("run", "--", sys.executable, "-c", "open('x', 'w')", env=env, cwd=where)

    assert result.returncode == 0, result.stderr
    assert "tracked files are not checked" not in result.stderr

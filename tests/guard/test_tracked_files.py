"""Tracked files: the run is blamed for what it changed in the checkout, not for how it was."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
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


# --- Nothing the command planted for git runs after it (issue 31) --------------------------
#
# Each case: what the operator's environment holds, and a command that plants a program git
# would run (a monitor, a clean filter, a `.git` indirection, a `git` first on PATH). The
# planted program writes a marker. After the run the marker is absent: cloudguard ran no git.
# Each control runs `git status` the way the check used to (the operator's environment, after
# the command) and the marker appears: the planted program can run, and would have.

PLANT = """
import os, pathlib, stat, sys
marker, kind = sys.argv[1], sys.argv[2]
planted = pathlib.Path(os.environ['HOME'], 'planted.sh')
planted.write_text('#!/bin/sh\\necho ran >> ' + marker + '\\ncat\\n')
planted.chmod(0o755)
home = pathlib.Path(os.environ['HOME'])
if kind == 'fsmonitor-in-home-gitconfig':
    (home / '.gitconfig').write_text(f'[core]\\n\\tfsmonitor = {planted}\\n')
elif kind == 'clean-filter-in-git-config-global':
    pathlib.Path(os.environ['GIT_CONFIG_GLOBAL']).write_text(
        f'[core]\\n\\tattributesFile = {home}/attributes\\n'
        f'[filter "x"]\\n\\tclean = {planted}\\n')
    (home / 'attributes').write_text('* filter=x\\n')
    os.utime('src/a.txt', (1, 1))  # stat-dirty: git would run the filter to compare it
elif kind == 'fsmonitor-in-dot-git-config':
    with open('.git/config', 'a') as config:
        config.write(f'[core]\\n\\tfsmonitor = {planted}\\n')
elif kind == 'a-dot-git-indirection':
    os.rename('.git', str(home / 'real.git'))
    with open(home / 'real.git' / 'config', 'a') as config:
        config.write(f'[core]\\n\\tfsmonitor = {planted}\\n')
    pathlib.Path('.git').write_text(f'gitdir: {home}/real.git\\n')
elif kind == 'git-first-on-path':
    fake = home / 'bin' / 'git'
    fake.write_text('#!/bin/sh\\necho ran >> ' + marker + '\\n')
    fake.chmod(0o755)
"""
DOORS = (
    "fsmonitor-in-home-gitconfig",
    "clean-filter-in-git-config-global",
    "fsmonitor-in-dot-git-config",
    "a-dot-git-indirection",
    "git-first-on-path",
)


def operator_env(tmp_path: Path, kind: str) -> dict[str, str]:
    """The operator's environment: a PATH that starts with a directory of their own (empty
    before the run) and, in one case, a global git config file named by GIT_CONFIG_GLOBAL."""
    env = minimal_env(tmp_path)
    (tmp_path / "home" / "bin").mkdir(exist_ok=True)
    env["PATH"] = f"{tmp_path / 'home' / 'bin'}:{env['PATH']}"
    if kind == "clean-filter-in-git-config-global":
        env["GIT_CONFIG_GLOBAL"] = str(tmp_path / "home" / "global.gitconfig")
    return env


def plant(
    tmp_path: Path, kind: str, *options: str
) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    repo = checkout(tmp_path)
    marker = tmp_path / "marker"
    script = tmp_path / "plant.py"
    script.write_text(PLANT)
    result = cloudguard(
        "run", *options, "--", sys.executable, str(script), str(marker), kind,
        env=operator_env(tmp_path, kind), cwd=repo,
    )  # fmt: skip
    return repo, marker, result


@pytest.mark.parametrize("kind", DOORS)
def test_nothing_the_command_planted_for_git_runs_after_it(tmp_path: Path, kind: str) -> None:
    _, marker, result = plant(tmp_path, kind)

    assert not marker.exists(), broken(
        "nothing-planted-for-git-runs-after-the-run",
        f"{kind}: the planted program ran after the command:\n{result.stderr}",
    )
    assert result.returncode in (0, 98), result.stderr
    if kind == "a-dot-git-indirection":
        assert "tracked-write: .git modified (the checkout's .git was replaced" in result.stderr


@pytest.mark.parametrize("kind", DOORS)
def test_control_git_run_after_the_command_the_old_way_runs_what_was_planted(
    tmp_path: Path, kind: str
) -> None:
    repo, marker, result = plant(tmp_path, kind)
    assert not marker.exists(), result.stderr

    env = operator_env(tmp_path, kind)
    subprocess.run(["git", "status"], cwd=repo, env=env, capture_output=True, check=False)

    assert marker.exists(), f"{kind}: git run the old way did not run the planted program"


def test_a_clean_filter_planted_leaves_the_run_green(tmp_path: Path) -> None:
    """A touched file with the same bytes is no change: the content decides, not the stat."""
    _, _, result = plant(tmp_path, "clean-filter-in-git-config-global")
    assert result.returncode == 0, result.stderr


# --- git can be told; the witness cannot (issue 31) ----------------------------------------

GIT = "import subprocess; git = lambda *a: subprocess.run(['git', '-c', 'user.email=t@t', '-c', 'user.name=t', *a], check=True, capture_output=True); "  # noqa: E501
TOLD = {
    "a-commit-during-the-run": (
        GIT + "open('src/a.txt', 'w').write('x'); git('commit', '-qam', 'hidden')",
        ["src/a.txt modified", "(the branch HEAD names moved during the run",
         ".git/index modified (the index changed during the run"],
    ),
    "a-skip-worktree-bit": (
        GIT + "git('update-index', '--skip-worktree', 'src/a.txt'); "
        "open('src/a.txt', 'w').write('x')",
        ["src/a.txt modified", ".git/index modified (the index changed during the run"],
    ),
    "a-new-gitignore-with-a-star": (
        "open('src/.gitignore', 'w').write('*\\n'); open('src/new.txt', 'w').write('n')",
        ["src/.gitignore added", "src/new.txt added"],
    ),
    "a-global-excludes-file": (
        "import os; d = os.path.join(os.environ['HOME'], '.config', 'git'); os.makedirs(d); "
        "open(os.path.join(d, 'ignore'), 'w').write('*\\n'); open('notes.txt', 'w').write('n')",
        ["notes.txt added"],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", TOLD)
def test_what_would_hide_a_change_from_git_is_a_finding(tmp_path: Path, case: str) -> None:
    repo = checkout(tmp_path)
    code, expected = TOLD[case]

    status, stderr = run_python(repo, tmp_path, code)

    missing = [line for line in expected if line not in stderr]
    assert not missing, broken(
        "what-would-hide-a-change-from-git-is-found", f"{case}: not named {missing}:\n{stderr}"
    )
    assert status == 98, stderr
    if case == "a-commit-during-the-run":
        assert ".git/HEAD modified" not in stderr  # HEAD still names the same branch


def test_a_git_status_the_suite_runs_is_no_finding(tmp_path: Path) -> None:
    """A refresh rewrites the index's cached stat fields: what the index decides is the same."""
    repo = checkout(tmp_path)
    (repo / "src" / "a.txt").touch()
    code, stderr = run_python(
        repo, tmp_path,
        "import os, subprocess; os.utime('src/b.txt', (1, 1)); "
        "subprocess.run(['git', 'status'], check=True, capture_output=True)",
    )  # fmt: skip
    assert code == 0, stderr


# --- The rules from before, as git reads them ----------------------------------------------

RULES = "build/\n*.log\n!keep.log\n/top\ndoc/**/x\n**/cache\na/**\n\\#hash\nsp\\ \n*.[oa]\n?.tmp\n"
PATHS = [
    ("build", True), ("build", False), ("src/build", True), ("run.log", False),
    ("src/deep/run.log", False), ("keep.log", False), ("top", False), ("src/top", False),
    ("doc/x", False), ("doc/a/b/x", False), ("src/cache", True), ("cache", False),
    ("a/q", False), ("a", True), ("ab", False), ("#hash", False), ("sp ", False),
    ("m.o", False), ("m.a", False), ("m.c", False), ("x.tmp", False), ("xy.tmp", False),
]  # fmt: skip


def test_the_ignore_rules_read_before_the_run_decide_as_git_does(tmp_path: Path) -> None:
    from cloudguard.guard import ignore_rules

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / ".gitignore").write_text(RULES)
    (repo / "src").mkdir()
    (repo / "src" / ".gitignore").write_text("*.c\n!m.c\n")
    for path, is_directory in PATHS:
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if is_directory:
            target.mkdir(exist_ok=True)
        elif not target.exists():
            target.write_text("")
    rules = ignore_rules.parse(RULES) + ignore_rules.parse("*.c\n!m.c\n", "src")
    asked = [p for p, d in PATHS if (repo / p).is_dir() == d]
    said = subprocess.run(
        ["git", "-C", str(repo), "check-ignore", "--no-index", "--stdin", "-z"],
        input="\0".join(asked).encode(), capture_output=True, check=False,
    ).stdout.decode().split("\0")  # fmt: skip

    for path in asked:
        ours = ignore_rules.ignored(rules, path, is_directory=(repo / path).is_dir())
        assert ours == (path in said), f"{path!r}: git says {path in said}, the rules {ours}"


def test_the_index_is_read_in_each_format_and_a_refresh_is_no_change(tmp_path: Path) -> None:
    from cloudguard.guard import git_index

    repo = checkout(tmp_path)
    index = repo / ".git" / "index"
    digests = {}
    for version in ("2", "3", "4"):
        git(repo, "update-index", "--index-version", version)
        digests[version] = git_index.digest(index.read_bytes())
    assert None not in digests.values() and len(set(digests.values())) == 1, digests

    (repo / "src" / "a.txt").touch()
    git(repo, "update-index", "--refresh")  # the cached stat fields change
    assert git_index.digest(index.read_bytes()) == digests["4"]
    git(repo, "update-index", "--skip-worktree", "src/a.txt")
    assert git_index.digest(index.read_bytes()) != digests["4"]


def test_git_runs_before_the_run_with_a_fixed_environment_of_its_own(tmp_path: Path) -> None:
    """None of the operator's GIT_* variables: a GIT_DIR would point git elsewhere, and
    GIT_CONFIG_PARAMETERS would set a monitor; the program is the absolute one found then."""
    from cloudguard.guard import tracked

    repo = checkout(tmp_path)
    marker = tmp_path / "marker"
    monitor = tmp_path / "monitor.sh"
    monitor.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    monitor.chmod(0o755)
    environ = {
        **minimal_env(tmp_path),
        "GIT_DIR": str(tmp_path / "elsewhere"),
        "GIT_CONFIG_PARAMETERS": f"'core.fsmonitor'='{monitor}'",
    }

    found = tracked.find_checkout(repo, environ)
    assert found is not None
    before = found.state()

    assert os.path.isabs(found.program)
    assert {k for k in found.environ if k.startswith("GIT_")} == {
        "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_OPTIONAL_LOCKS"
    }  # fmt: skip
    assert "src/a.txt" in before.files and not marker.exists()
    # The control: git with the operator's GIT_CONFIG_PARAMETERS runs the monitor.
    operator = {**minimal_env(tmp_path), "GIT_CONFIG_PARAMETERS": environ["GIT_CONFIG_PARAMETERS"]}
    subprocess.run(["git", "status"], cwd=repo, env=operator, capture_output=True, check=False)
    assert marker.exists()


def test_a_file_git_holds_as_clean_is_compared_as_its_object(tmp_path: Path) -> None:
    """Not read before the run (the index's object is its content); after, a change of the
    same length is found, and a touch is none."""
    from cloudguard.guard import tracked

    repo = checkout(tmp_path)
    for name in ("a.txt", "b.txt"):
        os.utime(repo / "src" / name, (1_000_000_000, 1_000_000_000))
    git(repo, "update-index", "--refresh")  # the index, newer than the files: they are clean
    found = tracked.find_checkout(repo, minimal_env(tmp_path))
    assert found is not None
    before = found.state()
    took = {p: str(before.files[p][6]) for p in ("src/a.txt", "src/b.txt")}  # type: ignore[index]
    assert all(value.startswith("blob ") for value in took.values()), took

    (repo / "src" / "a.txt").write_text("A.txt\n")  # the same length
    (repo / "src" / "b.txt").touch()

    changes = [(c.path, c.change) for c in tracked.changes(found, before, found.look(before))]
    assert changes == [("src/a.txt", "modified")], broken(
        "a-clean-file-is-compared-as-its-object", f"found {changes}"
    )

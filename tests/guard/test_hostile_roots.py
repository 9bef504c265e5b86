"""The proof, green and unmodified: in a hostile environment the sealed run stays green AND
leaves every hostile root byte-identical, both asserted.

The environment is one a developer's machine really is: an `~/.aws/config`
whose region (and `credential_process`) would break a known assertion, an
`~/.azure/config` with defaults, and an application's data root pre-seeded
with state, once at its XDG default and once where the application's own
variable points, which outranks `XDG_DATA_HOME` (the founding case: tests
that read and wrote the developer's real user data). The suite isolates
itself the usual way, by pointing `XDG_DATA_HOME` at its `tmp_path`; only the
seal (which drops the outranking variable, as the project's cloudguard.toml
asks) makes that enough. Without cloudguard the same suite is red and
rewrites the data root: the environment is hostile, and the pair is no
coincidence.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from guard_helpers import cloudguard, git, minimal_env
from named_checks import broken

APP = '''
import json
import os


def data_dir():
    """The application's data root: its own variable outranks XDG_DATA_HOME."""
    xdg = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    return os.environ.get("MYAPP_DATA_DIR") or os.path.join(xdg, "myapp")


def start():
    """Count this start in the application's state; the count after it."""
    os.makedirs(data_dir(), exist_ok=True)
    path = os.path.join(data_dir(), "state.json")
    count = json.load(open(path))["count"] if os.path.exists(path) else 0
    json.dump({"count": count + 1}, open(path, "w"))
    return count + 1
'''
CONFTEST = """
import pytest


@pytest.fixture(autouse=True)
def _own_data_root(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
"""
SUITE = """
import botocore.session

import myapp


def test_a_fresh_application_starts_at_one():
    assert myapp.start() == 1


def test_the_region_is_the_suites_own():
    assert botocore.session.Session().get_config_variable("region") == "us-east-1"
"""
PROJECT = """
[seal.names]
MYAPP_DATA_DIR = "outranks the suite's XDG_DATA_HOME: it names the developer's real data"

[ambient.roots]
"$XDG_DATA_HOME/myapp" = "the application's data root"
"$MYAPP_DATA_DIR" = "the application's data root, where its own variable points"
"""


def hostile(tmp_path: Path) -> tuple[Path, dict[str, str], list[Path]]:
    """A checkout with the suite, and an environment whose roots are planted and pre-seeded."""
    env = minimal_env(tmp_path, MYAPP_DATA_DIR=str(tmp_path / "real-data"))
    home = Path(env["HOME"])
    marker = tmp_path / "credential-process-ran"
    planted = {
        home / ".aws" / "config": (
            f"[default]\nregion = eu-hostile-1\ncredential_process = touch {marker}\n"
        ),
        home / ".azure" / "config": "[defaults]\ngroup = production\nlocation = westeurope\n",
        home / ".local" / "share" / "myapp" / "state.json": '{"count": 41}',
        tmp_path / "real-data" / "state.json": '{"count": 41}',
    }
    for path, text in planted.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "myapp.py").write_text(APP)
    (repo / "tests" / "conftest.py").write_text(CONFTEST)
    (repo / "tests" / "test_app.py").write_text(SUITE)
    (repo / "cloudguard.toml").write_text(PROJECT)
    (repo / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    (repo / ".gitignore").write_text("__pycache__/\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "the suite")
    roots = [
        home / ".aws",
        home / ".azure",
        home / ".local" / "share" / "myapp",
        tmp_path / "real-data",
    ]
    return repo, env, roots


def digest(roots: list[Path]) -> dict[str, str]:
    """Every file and directory under the roots, by content, mode and mtime."""
    found = {}
    for root in roots:
        for path in sorted([root, *root.rglob("*")]):
            status = path.lstat()
            content = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
            found[str(path)] = f"{content} {status.st_mode:o} {status.st_mtime_ns}"
    return found


PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]


def test_a_hostile_environment_run_is_green_and_leaves_the_hostile_roots_byte_identical(
    tmp_path: Path,
) -> None:
    repo, env, roots = hostile(tmp_path)
    before = digest(roots)

    result = cloudguard("run", "--", *PYTEST, "tests", env=env, cwd=repo, timeout=120)

    after = digest(roots)
    changed = sorted(
        path for path in before.keys() | after.keys() if before.get(path) != after.get(path)
    )
    assert not changed, broken(
        "the-hostile-roots-are-left-byte-identical",
        f"the run changed the hostile roots: {changed}\n{result.stdout}{result.stderr}",
    )
    assert result.returncode == 0, f"the hostile run was not green:\n{result.stdout}{result.stderr}"
    assert "2 passed" in result.stdout, result.stdout
    assert not (tmp_path / "credential-process-ran").exists()


def test_without_cloudguard_the_same_suite_is_red_and_rewrites_the_data_root(
    tmp_path: Path,
) -> None:
    """The control: the environment really is hostile."""
    repo, env, roots = hostile(tmp_path)
    before = digest(roots)

    result = subprocess.run(
        [*PYTEST, "-p", "no:cloudguard", "tests"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip

    assert result.returncode == 1, result.stdout + result.stderr
    assert "assert 42 == 1" in result.stdout
    assert "'eu-hostile-1' == 'us-east-1'" in result.stdout
    changed = {path for path, value in digest(roots).items() if before.get(path) != value}
    assert changed == {str(tmp_path / "real-data" / "state.json")}

"""A run leaves the ambient roots and the checkout as it found them, or it is red naming each write.

One project (a git checkout with a tracked fixture, a HOME with a cloud CLI's
home, an application data root named by the variable that outranks its XDG
default) and one suite that writes into each kind of place: the aws CLI's
credential cache, the data root through its overriding variable, a tracked
fixture, a new file in a tracked directory. Red naming each, under
`cloudguard run` and with the plugin alone, serially and under xdist; green
with those paths declared as outputs. Negative controls
(tests/guard/test_negative_controls.py) take the fingerprint, the git
comparison and the per-test watch away, and these go green where they must be red.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from guard_helpers import cloudguard, git, minimal_env, reaches
from named_checks import broken

SUITE = """
import os
import pathlib


def test_writes_the_aws_cli_cache():
    cache = pathlib.Path(os.environ["HOME"], ".aws", "cli", "cache")
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "0123abcd.json").write_text('{"Credentials": {"AccessKeyId": "ASIAFAKE"}}')


def test_writes_the_data_root_through_its_variable():
    pathlib.Path(os.environ["MYAPP_DATA_DIR"], "state.json").write_text('{"count": 1}')


def test_rewrites_a_tracked_fixture():
    pathlib.Path("tests/fixtures/known.json").write_text('{"regenerated": true}')


def test_scaffolds_a_file_in_a_tracked_directory():
    pathlib.Path("tests/fixtures/scaffolded.json").write_text("{}")


def test_writes_nothing():
    assert pathlib.Path("tests/fixtures/known.json").exists()
"""
# The same writes from a command that is not pytest: only the comparison after can see them.
WRITER = """
import pathlib, runpy
module = runpy.run_path("tests/test_writes.py")
for name, test in module.items():
    if name.startswith("test_"):
        test()
"""
ROOTS = """
[ambient.roots]
"$XDG_DATA_HOME/myapp" = "the application's data root"
"$MYAPP_DATA_DIR" = "outranks XDG_DATA_HOME/myapp for the application"
"""
OUTPUTS = """
[outputs]
"~/.aws/cli/cache" = "the suite runs the aws CLI, which caches credentials there"
"$MYAPP_DATA_DIR/state.json" = "the suite resets the application's state on purpose"
"tests/fixtures/known.json" = "the snapshot test regenerates it"
"tests/fixtures/scaffold*" = "the scaffolding test writes its output beside the fixtures"
"""
AMBIENT = {  # test -> (path under tmp_path, change, root)
    "test_writes_the_aws_cli_cache": ("home/.aws/cli/cache/0123abcd.json", "created", "~/.aws"),
    "test_writes_the_data_root_through_its_variable": (
        "appdata/state.json", "modified", "$MYAPP_DATA_DIR"
    ),
}  # fmt: skip
TRACKED = {
    "test_rewrites_a_tracked_fixture": "tests/fixtures/known.json modified",
    "test_scaffolds_a_file_in_a_tracked_directory": "tests/fixtures/scaffolded.json added",
}


@dataclass(frozen=True)
class Project:
    root: Path  # tmp_path: home/, appdata/, repo/, the registries
    repo: Path
    env: dict[str, str]

    def registry(self, *tables: str) -> Path:
        path = self.root / f"registry-{len(list(self.root.glob('registry-*')))}.toml"
        path.write_text("".join(tables))
        return path


def project(tmp_path: Path) -> Project:
    env = minimal_env(tmp_path, MYAPP_DATA_DIR=str(tmp_path / "appdata"))
    home = Path(env["HOME"])
    (home / ".aws").mkdir()
    (home / ".aws" / "config").write_text("[default]\nregion = eu-west-1\n")
    (tmp_path / "appdata").mkdir()
    (tmp_path / "appdata" / "state.json").write_text('{"count": 41}')
    repo = tmp_path / "repo"
    (repo / "tests" / "fixtures").mkdir(parents=True)
    (repo / "tests" / "test_writes.py").write_text(SUITE)
    (repo / "tests" / "fixtures" / "known.json").write_text('{"known": true}')
    (repo / ".gitignore").write_text("__pycache__/\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "the project")
    return Project(tmp_path, repo, env)


def reset(box: Project) -> None:
    """Put back what the suite wrote, for another run of it."""
    git(box.repo, "checkout", "--", ".")
    (box.repo / "tests" / "fixtures" / "scaffolded.json").unlink()
    shutil.rmtree(Path(box.env["HOME"]) / ".aws" / "cli")
    (box.root / "appdata" / "state.json").write_text('{"count": 41}')


def pytest_argv(junit: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
            f"--junitxml={junit}", "-o", "junit_family=xunit1", *extra, "tests"]  # fmt: skip


def verdicts(junit: Path) -> dict[str, str | None]:
    """Test name -> its failure text, None when it passed."""
    found: dict[str, str | None] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        failures = [f"{c.get('message')}\n{c.text}" for c in case if c.tag in ("failure", "error")]
        found[case.get("name", "")] = "\n".join(failures) or None
    return found


def assert_each_ambient_write_named_in_its_test(
    failures: dict[str, str | None], tmp_path: Path
) -> None:
    for test, (path, change, root) in AMBIENT.items():
        failure = failures[test]
        assert failure is not None, broken(
            "a-write-is-named-in-its-test", f"{test} passed: its write was not named in its test"
        )
        assert f"ambient-write: {tmp_path / path} {change} (ambient root {root})" in failure, (
            broken("a-write-is-named-in-its-test", f"{test}'s write not named in it:\n{failure}")
        )
    for test in (*TRACKED, "test_writes_nothing"):
        assert failures[test] is None, f"{test} failed: {failures[test]}"


def test_a_command_that_writes_into_each_kind_of_root_is_red_naming_each(tmp_path: Path) -> None:
    box = project(tmp_path)
    log = tmp_path / "reach.jsonl"

    result = cloudguard(
        "run", "--log", str(log), "--registry", str(box.registry(ROOTS)), "--",
        sys.executable, "-c", WRITER, env=box.env, cwd=box.repo,
    )  # fmt: skip

    assert result.returncode == 98, f"the run did not go red on its writes:\n{result.stderr}"
    for path, change, root in AMBIENT.values():
        shown = (
            f"ambient-write: {tmp_path / path} {change} (ambient root {root}), found after the run"
        )
        assert shown in result.stderr, broken(
            "ambient-writes-are-found-after-the-run", f"not named: {shown}\n{result.stderr}"
        )
    for named in TRACKED.values():
        shown = f"tracked-write: {named} (checkout {box.repo}), found after the run"
        assert shown in result.stderr, broken(
            "tracked-writes-are-found-after-the-run", f"not named: {shown}\n{result.stderr}"
        )
    records = [r for r in reaches(log) if r["via"] in ("ambient-write", "tracked-write")]
    assert {Path(str(r["target"])).name for r in records} == {
        "0123abcd.json", "cache", "cli", "state.json", "known.json", "scaffolded.json"
    }  # fmt: skip
    assert all(r["pid"] is None and r["test"] == "" for r in records), records


def test_a_suite_under_run_is_red_naming_each_write_and_the_test_that_made_it(
    tmp_path: Path,
) -> None:
    box = project(tmp_path)
    junit = tmp_path / "junit.xml"

    result = cloudguard(
        "run", "--registry", str(box.registry(ROOTS)), "--", *pytest_argv(junit),
        env=box.env, cwd=box.repo, timeout=120,
    )  # fmt: skip

    assert result.returncode == 98, result.stderr
    assert_each_ambient_write_named_in_its_test(verdicts(junit), tmp_path)
    for test, (path, change, _) in AMBIENT.items():
        assert f"{tmp_path / path} {change}" in result.stderr
        assert f"found during test tests/test_writes.py::{test}" in result.stderr
    for named in TRACKED.values():  # one session's compare, after the suite
        assert f"tracked-write: {named} (checkout {box.repo}), found after the run" in result.stderr


def test_the_plugin_alone_names_each_write_serially_and_every_write_under_xdist(
    tmp_path: Path,
) -> None:
    box = project(tmp_path)
    (box.repo / "cloudguard.toml").write_text(ROOTS)  # a discovered file may add roots
    git(box.repo, "add", "cloudguard.toml")
    git(box.repo, "commit", "-qm", "roots")
    serial, parallel = tmp_path / "serial.xml", tmp_path / "parallel.xml"

    alone = subprocess.run(
        [*pytest_argv(serial, "--cloudguard")],
        cwd=box.repo, env=box.env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    reset(box)
    xdist = subprocess.run(
        [*pytest_argv(parallel, "--cloudguard", "-n", "2")],
        cwd=box.repo, env=box.env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip

    assert alone.returncode == 98, alone.stdout + alone.stderr
    assert_each_ambient_write_named_in_its_test(verdicts(serial), tmp_path)
    for named in TRACKED.values():  # the session's comparison, after its tests
        assert f"tracked-write: {named} (checkout {box.repo}), found after the run" in alone.stdout
    # Under xdist the workers' tests run at once: each write is found after the session.
    assert xdist.returncode == 98, xdist.stdout + xdist.stderr
    for path, change, root in AMBIENT.values():
        shown = f"ambient-write: {tmp_path / path} {change} (ambient root {root}), found after"
        assert shown in xdist.stdout, broken(
            "ambient-writes-are-found-after-the-run", f"not named: {shown}\n{xdist.stdout}"
        )
    for named in TRACKED.values():
        assert f"tracked-write: {named} (checkout {box.repo}), found after the run" in xdist.stdout


def test_the_same_suite_with_its_writes_declared_as_outputs_is_green(tmp_path: Path) -> None:
    box = project(tmp_path)
    junit = tmp_path / "junit.xml"
    registry = box.registry(ROOTS, OUTPUTS)

    result = cloudguard(
        "run", "--registry", str(registry), "--", *pytest_argv(junit),
        env=box.env, cwd=box.repo, timeout=120,
    )  # fmt: skip
    command = cloudguard(
        "run", "--registry", str(registry), "--", sys.executable, "-c", WRITER,
        env=box.env, cwd=box.repo,
    )  # fmt: skip

    said = result.stderr + command.stderr
    assert "write(s)" not in said, broken(
        "declared-outputs-are-not-writes", f"a declared output counted as a write:\n{said}"
    )
    assert result.returncode == 0, result.stderr
    assert set(verdicts(junit).values()) == {None}
    assert command.returncode == 0, command.stderr


def test_a_discovered_file_declares_outputs_outside_its_checkout_only_once_trusted(
    tmp_path: Path,
) -> None:
    """A repository's file may exempt its own checkout (as .gitignore does), not your home:
    until the operator trusts it, its outputs there are ignored, and said."""
    box = project(tmp_path)
    (box.repo / "cloudguard.toml").write_text(ROOTS + OUTPUTS)
    git(box.repo, "add", "cloudguard.toml")
    git(box.repo, "commit", "-qm", "roots and outputs")
    junit = tmp_path / "junit.xml"

    result = subprocess.run(
        pytest_argv(junit, "--cloudguard"),
        cwd=box.repo, env=box.env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip

    failures = verdicts(junit)
    exempted = [test for test in AMBIENT if failures[test] is None]
    assert not exempted, broken(
        "untrusted-outputs-outside-the-checkout-are-ignored",
        f"a discovered file's outputs outside the checkout were honoured: {exempted} passed\n"
        f"{result.stdout}",
    )
    assert result.returncode == 98, result.stdout
    assert "ignored [outputs] ~/.aws/cli/cache, $MYAPP_DATA_DIR/state.json: not trusted" in (
        result.stderr
    )
    assert_each_ambient_write_named_in_its_test(failures, tmp_path)
    assert "tracked-write" not in result.stdout, "the checkout's outputs count"

    reset(box)
    trusted = cloudguard("trust", str(box.repo / "cloudguard.toml"), env=box.env, cwd=box.repo)
    assert trusted.returncode == 0, trusted.stderr
    assert "it may now set outputs: outside the checkout" in trusted.stdout
    again = subprocess.run(
        pytest_argv(junit, "--cloudguard"),
        cwd=box.repo, env=box.env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr


def test_a_writes_failure_block_says_how_to_keep_the_write_out_of_the_root() -> None:
    from cloudguard.guard.pytest.failure import failure_message

    record = {"via": "ambient-write", "target": "/home/dev/.aws/cli/cache/a.json",
              "change": "created", "root": "~/.aws", "found": "during the test"}  # fmt: skip

    block = failure_message([record], "/tmp/reach.jsonl")

    assert "this test wrote where a run must not write: ambient-write" in block, block
    assert "ambient-write: point the code at a directory of the test's own" in block, block

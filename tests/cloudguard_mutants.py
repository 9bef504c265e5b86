"""The negative controls' harness: break the package on purpose, require named tests to go red.

A control copies the `cloudguard` package, applies one mutation to the copy,
and runs the named tests with the copy first on PYTHONPATH (shims a mutant
seal writes import the mutant too). It passes only when every named test
fails and that test's OWN failure message (read from the JUnit XML report,
not the whole output: pytest echoes a failing test's source, which contains
the expected words) carries the expected reason: a guard whose tests stay
green when it is broken, or go red for another reason, is not tested.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import cloudguard

REPO = Path(__file__).resolve().parents[1]
PACKAGE = Path(cloudguard.__file__).resolve().parent


@dataclass(frozen=True)
class Mutation:
    name: str
    module: str  # file inside the package
    original: str
    broken: str
    tests: tuple[str, ...]  # node ids that must fail
    # Text (every text) each named test's own failure message must contain; a mapping
    # gives each test its own.
    reason: str | tuple[str, ...] | Mapping[str, str | tuple[str, ...]]
    package: Path = PACKAGE  # the package mutated: the core, or an adapter's
    # Further edits of the same mutation, (module, original, broken) each: one promise whose
    # code stands in more than one place (a pid namespace is entered here, its /proc there).
    also: tuple[tuple[str, str, str], ...] = ()

    def reasons_for(self, test: str) -> tuple[str, ...]:
        reason = self.reason[test] if isinstance(self.reason, Mapping) else self.reason
        return (reason,) if isinstance(reason, str) else tuple(reason)


def copy_package(root: Path, package: Path = PACKAGE) -> Path:
    shutil.copytree(package, root / package.name, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def mutant(tmp_path: Path, mutation: Mutation) -> Path:
    root = copy_package(tmp_path / "mutant", mutation.package)
    for module, original, broken in ((mutation.module, mutation.original, mutation.broken),
                                     *mutation.also):  # fmt: skip
        target = root / mutation.package.name / module
        source = target.read_text()
        assert source.count(original) == 1, f"mutation {mutation.name!r} no longer applies"
        target.write_text(source.replace(original, broken))
    return root


def run_tests(root: Path, tests: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """Run `tests` with the package copy at `root` imported first.

    The working directory is `root`, not the repo: `python -m` puts the working
    directory first on sys.path, and the repo's own package must not win. Each
    test's verdict is written to `root`/junit.xml (see `own_failures`).
    """
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
         "--rootdir", str(REPO), "-c", str(REPO / "pyproject.toml"),
         f"--junitxml={root / 'junit.xml'}", "-o", "junit_family=xunit1",
         *(str(REPO / test) for test in tests)],
        cwd=root,
        env=_own_session_env(root),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip


def _own_session_env(root: Path) -> dict[str, str]:
    """The outer session's environment minus its cloudguard binding and xdist identity.

    The inner pytest then seals itself with its own log (the repository's ini
    enables the plugin): a sibling test's reach in the outer session's shared
    log must not turn the inner run red.
    """
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("CLOUDGUARD_", "PYTEST_XDIST_", "PYTEST_CURRENT_TEST"))
    }
    return dict(env, PYTHONPATH=str(root), PYTEST_ADDOPTS="")


def own_failures(junit: Path) -> dict[str, str | None]:
    """Node id -> that test's own failure message, None when it passed.

    The raised exception's lines only (pytest's `E   ` lines), never the echoed
    source around them: that names what the test looks for. A failure without
    a traceback (pytest.fail(pytrace=False), the plugin's verdict) is its text.
    """
    verdicts: dict[str, str | None] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        nodeid = _nodeid(case.get("classname", ""), case.get("name", ""))
        texts = [_raised(child) for child in case if child.tag in ("failure", "error")]
        verdicts[nodeid] = "\n".join(texts) if texts else None
    return verdicts


def _raised(failure: ET.Element) -> str:
    text = failure.text or ""
    raised = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    return "\n".join(raised) if raised else (failure.get("message") or "") + "\n" + text


def _nodeid(classname: str, name: str) -> str:
    """`tests.guard.test_run` + `test_x[a]` -> `tests/guard/test_run.py::test_x[a]`."""
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):  # the longest prefix that is a module file
        module = Path(*parts[:cut]).with_suffix(".py")
        if (REPO / module).is_file():
            return "::".join([module.as_posix(), *parts[cut:], name])
    return f"{classname}::{name}"


def assert_turns_red(tmp_path: Path, mutation: Mutation) -> None:
    root = mutant(tmp_path, mutation)
    assert_each_red_for_its_reason(root, mutation, run_tests(root, mutation.tests))


def assert_each_red_for_its_reason(
    root: Path, mutation: Mutation, result: subprocess.CompletedProcess[str]
) -> None:
    """Every named test failed, each with its own expected message (root/junit.xml)."""
    output = result.stdout + result.stderr
    junit = root / "junit.xml"
    assert junit.is_file(), f"no JUnit report with {mutation.name!r}:\n{output}"
    verdicts = own_failures(junit)
    for test in mutation.tests:
        assert test in verdicts, f"{test} did not run with {mutation.name!r}:\n{output}"
        failure = verdicts[test]
        assert failure is not None, f"{test} stayed green with {mutation.name!r}:\n{output}"
        for reason in mutation.reasons_for(test):
            assert reason in failure, (
                f"{test} went red for another reason with {mutation.name!r} "
                f"(its own message lacks {reason!r}):\n{failure}"
            )


def assert_green_unmutated(tmp_path: Path, mutations: Sequence[Mutation]) -> None:
    """The control's control: the same tests, on an unmutated copy, pass."""
    tests = sorted({t for m in mutations for t in m.tests})
    result = run_tests(copy_package(tmp_path / "copy"), tests)
    assert result.returncode == 0, result.stdout + result.stderr

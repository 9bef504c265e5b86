"""The negative controls' harness: break the package on purpose, require named tests to go red.

A control copies the `cloudguard` package, applies one mutation to the copy,
and runs the named tests with the copy first on PYTHONPATH (shims a mutant
seal writes import the mutant too). It passes only when every named test
fails and the output carries the expected message: a guard whose tests stay
green when it is broken is not tested.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
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
    reason: str | tuple[str, ...]  # text (every text) the failure output must contain
    package: Path = PACKAGE  # the package mutated: the core, or an adapter's


def copy_package(root: Path, package: Path = PACKAGE) -> Path:
    shutil.copytree(package, root / package.name, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def mutant(tmp_path: Path, mutation: Mutation) -> Path:
    root = copy_package(tmp_path / "mutant", mutation.package)
    target = root / mutation.package.name / mutation.module
    source = target.read_text()
    assert source.count(mutation.original) == 1, f"mutation {mutation.name!r} no longer applies"
    target.write_text(source.replace(mutation.original, mutation.broken))
    return root


def run_tests(root: Path, tests: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """Run `tests` with the package copy at `root` imported first.

    The working directory is `root`, not the repo: `python -m` puts the working
    directory first on sys.path, and the repo's own package must not win.
    """
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
         "--rootdir", str(REPO), "-c", str(REPO / "pyproject.toml"),
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


def assert_turns_red(tmp_path: Path, mutation: Mutation) -> None:
    result = run_tests(mutant(tmp_path, mutation), mutation.tests)
    output = result.stdout + result.stderr
    failed = [line for line in output.splitlines() if line.startswith("FAILED ")]
    for test in mutation.tests:
        assert any(test in line for line in failed), (
            f"{test} stayed green with {mutation.name!r}:\n{output}"
        )
    reasons = (mutation.reason,) if isinstance(mutation.reason, str) else mutation.reason
    for reason in reasons:
        assert reason in output, f"red for the wrong reason with {mutation.name!r}:\n{output}"


def assert_green_unmutated(tmp_path: Path, mutations: Sequence[Mutation]) -> None:
    """The control's control: the same tests, on an unmutated copy, pass."""
    tests = sorted({t for m in mutations for t in m.tests})
    result = run_tests(copy_package(tmp_path / "copy"), tests)
    assert result.returncode == 0, result.stdout + result.stderr

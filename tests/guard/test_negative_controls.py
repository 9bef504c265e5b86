"""Negative controls: break each guard on purpose; the named tests must go red for the right reason.

Each control copies the `cloudguard` package, applies one mutation to the
copy, and runs the named tests with the copy first on PYTHONPATH (the shims
a mutant seal writes import the mutant too). A control passes only when
every named test fails with the expected message: a guard whose tests stay
green when it is broken is not tested.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import cloudguard

REPO = Path(__file__).resolve().parents[2]
PACKAGE = Path(cloudguard.__file__).resolve().parent


@dataclass(frozen=True)
class Mutation:
    name: str
    module: str  # file inside the package
    original: str
    broken: str
    tests: tuple[str, ...]  # node ids that must fail
    reason: str  # text the failure output must contain


MUTATIONS = [
    Mutation(
        name="seal drops nothing",
        module="seal.py",
        original="return name in self.names or name.startswith(self.prefixes)",
        broken="return False",
        tests=(
            "tests/guard/test_refusers.py::test_hostile_environment_nothing_planted_reaches_the_command_or_the_record",
            "tests/guard/test_run.py::test_a_clean_command_keeps_its_own_exit_code_and_prints_one_seal_line",
        ),
        reason="planted identity variables reached the sealed command",
    ),
    Mutation(
        name="provider not bound",
        module="seal.py",
        original="env[variable] = str(seal.provider)",
        broken="pass",
        tests=("tests/guard/test_run.py::test_the_refusing_provider_is_bound_and_refuses_loudly",),
        reason="provider call was not refused",
    ),
    Mutation(
        name="guard bin not on PATH",
        module="seal.py",
        original='env["PATH"] = guard_first(seal, environ.get("PATH", ""))',
        broken='env["PATH"] = environ.get("PATH", "")',
        tests=(
            "tests/guard/test_run.py::test_a_reach_makes_the_run_red_and_names_what_was_reached",
            "tests/guard/test_refusers.py::test_hostile_environment_nothing_planted_reaches_the_command_or_the_record",
        ),
        reason="did not go red",
    ),
    Mutation(
        name="check sees nothing",
        module="runner.py",
        original="    if not records:\n",
        broken="    if True:\n",
        tests=(
            "tests/guard/test_run.py::test_a_reach_makes_the_run_red_and_names_what_was_reached",
            "tests/guard/test_run.py::test_check_reports_clean_red_and_unreadable_logs",
        ),
        reason="run did not go red on a reach",
    ),
    Mutation(
        name="refuser records nothing",
        module="reach.py",
        original="        append(log, record)\n",
        broken="        pass\n",
        tests=(
            "tests/guard/test_refusers.py::test_every_shipped_shim_records_then_refuses_with_98",
            "tests/guard/test_run.py::test_a_reach_makes_the_run_red_and_names_what_was_reached",
        ),
        reason="run did not go red on a reach",
    ),
]


def run_tests(root: Path, tests: list[str] | tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """Run `tests` with the package copy at `root` imported first.

    The working directory is `root`, not the repo: `python -m` puts the working
    directory first on sys.path, and the repo's own package must not win.
    """
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-q",
            "--rootdir",
            str(REPO),
            "-c",
            str(REPO / "pyproject.toml"),
            *(str(REPO / test) for test in tests),
        ],
        cwd=root,
        env=dict(os.environ, PYTHONPATH=str(root), PYTEST_ADDOPTS=""),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def mutant(tmp_path: Path, mutation: Mutation) -> Path:
    root = tmp_path / "mutant"
    shutil.copytree(PACKAGE, root / "cloudguard", ignore=shutil.ignore_patterns("__pycache__"))
    target = root / "cloudguard" / mutation.module
    source = target.read_text()
    assert source.count(mutation.original) == 1, f"mutation {mutation.name!r} no longer applies"
    target.write_text(source.replace(mutation.original, mutation.broken))
    return root


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_guard_turns_its_tests_red(tmp_path: Path, mutation: Mutation) -> None:
    root = mutant(tmp_path, mutation)
    result = run_tests(root, mutation.tests)
    output = result.stdout + result.stderr

    failed = [line for line in output.splitlines() if line.startswith("FAILED ")]
    for test in mutation.tests:
        assert any(test in line for line in failed), (
            f"{test} stayed green with {mutation.name!r}:\n{output}"
        )
    assert mutation.reason in output, f"red for the wrong reason with {mutation.name!r}:\n{output}"


def test_the_named_tests_pass_without_a_mutation(tmp_path: Path) -> None:
    """The control's control: the same tests, unmutated copy, are green."""
    root = tmp_path / "copy"
    shutil.copytree(PACKAGE, root / "cloudguard", ignore=shutil.ignore_patterns("__pycache__"))
    tests = sorted({t for m in MUTATIONS for t in m.tests})
    result = run_tests(root, tests)
    assert result.returncode == 0, result.stdout + result.stderr

"""Negative controls: break re-verification on purpose; the named tests must go red, for the
right reason.

Each control copies the `cloudguard` package, applies one mutation to the
copy (to `reap/verify.py` or `reap/engine.py`), and runs the named tests with
the copy first on PYTHONPATH. It passes only when every named test fails
and the output carries the expected message: a safety check whose tests
stay green when it is broken is not tested.
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
AZURE = "adapters/azure/tests/test_azure_reaper.py"
AWS = "adapters/aws/tests/test_aws_reaper.py"
AZURE_SKIP = f"{AZURE}::test_a_vm_that_changed_since_the_plan_is_skipped_and_left_alone"


@dataclass(frozen=True)
class Mutation:
    name: str
    module: str  # file inside the package
    original: str
    broken: str
    tests: tuple[str, ...]  # node ids that must fail
    reason: str | tuple[str, ...]  # text (every text) the failure output must contain


MUTATIONS = [
    Mutation(
        name="protection tag ignored",
        module="reap/verify.py",
        original="if (protected := protection_tag(current.tags)) is not None:",
        broken="if (protected := None) is not None:",
        tests=(
            f"{AZURE_SKIP}[protected]",
            f"{AZURE_SKIP}[protected-cloudguard]",
            f"{AWS}::test_a_protection_tag_added_after_the_plan_skips_the_instance[do-not-reap]",
            f"{AWS}::test_a_protection_tag_added_after_the_plan_skips_the_instance[Cloudguard-Protect]",
        ),
        reason="was acted on",
    ),
    Mutation(
        name="tag comparison always passes",
        module="reap/verify.py",
        original="    if before == after:\n",
        broken="    if True:\n",
        tests=(f"{AZURE_SKIP}[task-retagged]", f"{AZURE_SKIP}[generation-changed]"),
        reason="was acted on",
    ),
    Mutation(
        name="controller record never seen",
        module="reap/verify.py",
        original="if t is not None and t in controller_tasks",
        broken="if t is not None and False",
        tests=(
            f"{AZURE_SKIP}[record-appeared]",
            "tests/reap/test_reap_apply.py::test_a_record_that_appears_mid_run_stops_that_item",
        ),
        reason="was acted on (record-appeared)",
    ),
    Mutation(
        name="unknown tags read as no protection",
        module="reap/verify.py",
        original="    if not current.tags:\n",
        broken="    if False:\n",
        tests=(f"{AZURE_SKIP}[tags-unreadable]",),
        reason="expected skip 'tags-unreadable'",
    ),
    Mutation(
        name="a vanished resource is not noticed",
        module="reap/verify.py",
        original='    if current is None or current.power_state == "terminated":\n',
        broken="    if False:\n",
        tests=(
            f"{AZURE_SKIP}[gone]",
            f"{AWS}::test_an_instance_terminated_since_the_plan_is_gone_not_failed",
        ),
        reason="expected skip 'gone'",
    ),
    Mutation(
        name="evidence read only once",
        module="reap/engine.py",
        original="        tasks = controller_tasks()\n",
        broken="        tasks = frozenset()\n",
        tests=(
            f"{AZURE_SKIP}[record-appeared]",
            "tests/reap/test_reap_apply.py::test_a_record_that_appears_mid_run_stops_that_item",
        ),
        reason="was acted on (record-appeared)",
    ),
    Mutation(
        name="dry run acts",
        module="reap/engine.py",
        original="    if not execute:\n",
        broken="    if False:\n",
        tests=(
            f"{AZURE}::test_a_dry_run_re_reads_the_vm_and_acts_on_nothing",
            f"{AWS}::test_a_dry_run_stops_nothing",
        ),
        reason=("a dry run sent a POST or DELETE", "a dry run stopped it"),
    ),
]


def run_tests(root: Path, tests: list[str] | tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """Run `tests` with the package copy at `root` imported first (cwd `root`: `python -m`
    puts the working directory first on sys.path, and the repo's package must not win)."""
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
def test_breaking_re_verification_turns_its_tests_red(tmp_path: Path, mutation: Mutation) -> None:
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


def test_the_named_tests_pass_without_a_mutation(tmp_path: Path) -> None:
    """The control's control: the same tests, against an unmutated copy, are green."""
    root = tmp_path / "copy"
    shutil.copytree(PACKAGE, root / "cloudguard", ignore=shutil.ignore_patterns("__pycache__"))
    result = run_tests(root, sorted({t for m in MUTATIONS for t in m.tests}))
    assert result.returncode == 0, result.stdout + result.stderr

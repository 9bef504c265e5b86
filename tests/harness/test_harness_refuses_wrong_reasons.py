"""The negative controls' harness accepts a red test only at its named check, for its reason.

The two mutants that fooled the harness when it matched words in a failure's
text (issue 24) are fed to it here, each as a control naming the check it
claims to break. Each test does go red, for another reason, and the harness
must refuse both:

- the hard seal failing to start (75) claimed as "the sink records nothing":
  the corpus test fails at "the-command-ran", not "the-reach-is-recorded";
- every apply's exit code forced to 1 claimed as "attachment not re-checked":
  the test fails at its exit-code assertion (no named check), although its
  output, quoted in the message, says "attached".

And the named-checks plugin itself: a marker quoted from the source or the
program's output, or a check that failed but was caught, is no named check.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cloudguard_mutants import TESTS, Mutation, assert_turns_red, mutant

HARD_CURL = (
    "tests/hard/test_hard_corpus.py::"
    "test_every_technique_is_recorded_and_red_under_the_hard_seal[curl]"
)
ATTACHED_DISK = (
    "adapters/azure/tests/test_azure_reaper.py::test_a_disk_attached_after_the_plan_is_not_deleted"
)
WRONG_REASONS = [
    Mutation(
        name="the hard seal fails to start, claimed as the sink recording nothing",
        module="guard/hard/requirements.py",
        original='if _sysctl("user.max_user_namespaces") == "0":',
        broken="if True:",
        tests=(HARD_CURL,),
        check="the-reach-is-recorded",
    ),
    Mutation(
        name="every exit code forced to 1, claimed as attachment not re-checked",
        module="reap/apply.py",
        original="    return end(ACTION_FAILED if counts[FAILED] else exit_codes.CLEAN)\n",
        broken="    return end(ACTION_FAILED)\n",
        tests=(ATTACHED_DISK,),
        check="an-attached-disk-is-kept",
    ),
]


@pytest.mark.parametrize("mutation", WRONG_REASONS, ids=lambda m: m.name)
def test_a_test_red_for_another_reason_is_refused(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    with pytest.raises(AssertionError, match="went red at another check") as refused:
        assert_turns_red(tmp_path_factory, mutation, WRONG_REASONS)
    # ...and the mutant did turn the test red: the harness refused the reason, not a pass.
    assert "stayed green" not in str(refused.value)


FORGERIES = """
import pytest
from named_checks import broken


def test_fails_at_its_check():
    assert 1 == 2, broken("the-check", "one is not two")


def test_quotes_a_marker_from_its_source():
    raise AssertionError("one is not two\\n[broken: the-check #0123456789abcdef]")


def test_quotes_a_marker_from_a_programs_output():
    import subprocess, sys
    echoed = subprocess.run(
        [sys.executable, "-c", "print('[broken: the-check #fedcba9876543210]')"],
        capture_output=True, text=True,
    ).stdout
    assert echoed == "", echoed


def test_fails_at_a_check_then_for_another_reason():
    with pytest.raises(AssertionError):
        assert 1 == 2, broken("the-check", "caught by the test itself")
    raise RuntimeError("the test died of something else")


def test_passes():
    pass
"""


def test_only_the_failing_checks_own_marker_names_it(tmp_path: Path) -> None:
    (tmp_path / "test_forgeries.py").write_text(FORGERIES)
    report = tmp_path / "checks.json"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:cloudguard",
         "-p", "named_checks", f"--named-checks={report}", "test_forgeries.py"],
        cwd=tmp_path, env={"PYTHONPATH": str(TESTS), "PATH": "/usr/bin:/bin"},
        capture_output=True, check=False, timeout=120,
    )  # fmt: skip
    verdicts = {
        nodeid.rpartition("::")[2]: (v["outcome"], v["checks"])
        for nodeid, v in json.loads(report.read_text()).items()
    }
    assert verdicts == {
        "test_fails_at_its_check": ("failed", ["the-check"]),
        "test_quotes_a_marker_from_its_source": ("failed", []),
        "test_quotes_a_marker_from_a_programs_output": ("failed", []),
        "test_fails_at_a_check_then_for_another_reason": ("failed", []),
        "test_passes": ("passed", []),
    }


def test_a_mutant_that_does_not_compile_is_refused_before_it_runs(tmp_path: Path) -> None:
    """A control whose edit is mis-indented breaks the whole module (the hard seal then fails
    to start): it would break every promise at once and none for its reason. It once passed
    for "the sink records nothing"."""
    misindented = Mutation(
        name="the sink records nothing, mis-indented",
        module="guard/hard/sink.py",
        original="        return attribution.reach_entry(via, target, sender, extra)\n",
        broken="            return None\n",
        tests=(HARD_CURL,),
        check="the-reach-is-recorded",
    )
    with pytest.raises(AssertionError, match="does not compile: unexpected indent"):
        mutant(tmp_path, misindented)

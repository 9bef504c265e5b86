"""Negative controls: break each guard on purpose; the proof must go red, for the right reason.

Each control runs the same inner suite as the proof with one piece of
cloudguard disabled from a plugin the inner run loads with `-p` (before the
seal is made and the guards installed) or from its conftest, then requires
`proof_problems` to name exactly the tests that guard protects, with the
reason that guard's absence gives. The fence lies beneath the guards, so a
disabled guard never lets a packet out: the call fails the ordinary,
swallowable way instead.
"""

from __future__ import annotations

import pytest
from inner_runs import REACHING, proof_problems, run_inner

from cloudguard import exit_codes

DISABLE_GUARD = """
from cloudguard.guard import inprocess
inprocess.GUARDS[{name!r}] = lambda: None  # negative control: this guard is never installed
"""


@pytest.mark.parametrize(
    ("guard", "test", "problem"),
    [
        # Without an SDK's naming hook the socket guard still refuses the host name: the test
        # stays red, but no longer naming the SDK call the proof names.
        ("botocore", "test_boto3_swallowed", "socket reached `s3.amazonaws.com:443`"),
        ("azure-core", "test_azure_swallowed", "socket reached `management.azure.com:443`"),
    ],
)
def test_each_sdk_hook_is_what_names_its_reach(fenced, guard, test, problem):
    run = run_inner(fenced, "reaches", "--cloudguard", early=DISABLE_GUARD.format(name=guard))

    problems = proof_problems(run)
    assert len(problems) == 1, problems
    assert problems[0].startswith(test) and problem in problems[0], problems


def test_the_socket_guard_is_what_makes_every_in_process_reach_red(fenced):
    # The one place that decides: without it, every swallowed in-process reach passes
    # (a Python child installs its own guards from the sitecustomize, so it stays red).
    run = run_inner(fenced, "reaches", "--cloudguard", early=DISABLE_GUARD.format(name="socket"))

    assert sorted(proof_problems(run)) == [
        f"{name} passed, expected to fail naming {REACHING[name]}"
        for name in ("test_azure_swallowed", "test_boto3_swallowed", "test_socket_swallowed")
    ]


def test_without_the_sitecustomize_a_python_child_goes_unseen(fenced):
    # As if the seal did not put the guards' sitecustomize on PYTHONPATH.
    conftest = """
from cloudguard.guard import seal
_sealed = seal.sealed_environment
def sealed_environment(*args, **kwargs):
    env, dropped = _sealed(*args, **kwargs)
    env["PYTHONPATH"] = env["PYTHONPATH"].replace(str(seal.SITECUSTOMIZE_DIR), "")
    return env, dropped
seal.sealed_environment = sealed_environment
"""
    run = run_inner(fenced, "reaches", "--cloudguard", early=conftest)

    assert proof_problems(run) == ["test_python_child_boto3 passed, expected to fail naming "
                                   + REACHING["test_python_child_boto3"]]  # fmt: skip


def test_the_record_not_the_raise_fails_a_swallowing_test(fenced):
    # Refusals still raise, but nothing is kept: every in-process swallowed reach passes.
    conftest = """
from cloudguard.guard import reach
reach.deliver = lambda address, record: None
"""
    run = run_inner(fenced, "reaches", "--cloudguard", conftest=conftest)

    assert sorted(proof_problems(run)) == [
        f"{name} passed, expected to fail naming {REACHING[name]}"
        for name in ("test_azure_swallowed", "test_boto3_swallowed", "test_socket_swallowed")
    ]


def test_the_session_verdict_stands_without_the_per_test_check(fenced):
    conftest = """
from cloudguard.guard.pytest import session_guard
session_guard.SessionGuard.refresh = lambda self, window: None
"""
    run = run_inner(fenced, "reaches", "--cloudguard", conftest=conftest)

    assert all(v.outcome == "passed" for v in run.verdicts.values())
    # The per-test attribution is gone, yet the session is red and lists every reach.
    assert run.result.ret == exit_codes.REACH_REFUSED
    for named in REACHING.values():
        assert named in run.result.stdout.str()


def test_without_the_plugin_the_swallowing_tests_pass(fenced):
    """The hazard is real: without cloudguard, each swallowed reach is a green test."""
    run = run_inner(fenced, "reaches", "-p", "no:cloudguard", "-k", "swallowed")

    assert {name: v.outcome for name, v in run.verdicts.items()} == {
        "test_boto3_swallowed": "passed",
        "test_azure_swallowed": "passed",
        "test_socket_swallowed": "passed",
    }
    assert run.result.ret == exit_codes.CLEAN

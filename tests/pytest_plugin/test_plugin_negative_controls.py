"""Negative controls of the proof: break each in-process guard in a copy of the package; the
proof must fail at the check of the inner test that guard protects (harness:
tests/cloudguard_mutants.py). And two tests of what stands without a part.

The fence lies beneath the guards, so a broken guard never lets a packet out:
the call fails the ordinary, swallowable way instead.
"""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red
from inner_runs import REACHING, run_inner

from cloudguard import exit_codes

PROOF = (
    "tests/pytest_plugin/test_plugin_proof.py::"
    "test_each_reach_fails_its_test_and_only_its_test[one-process]"
)
EVERY_GUARD = (
    "GUARDS: dict[str, Callable[[], None]] = {guard.via: guard.install for guard in DECLARED}"
)
IN_PROCESS = ("test_azure_swallowed", "test_boto3_swallowed", "test_socket_swallowed")


def _without(via: str) -> str:
    return EVERY_GUARD.replace("DECLARED}", f"DECLARED if guard.via != {via!r}}}")


def _red(*names: str) -> tuple[str, ...]:
    return tuple(f"{name} is red naming its reach" for name in names)


MUTATIONS = [
    # Without an SDK's naming hook the socket guard still refuses the host name: the test
    # stays red, but no longer naming the SDK call the proof names.
    Mutation(
        name="the botocore naming hook is never installed",
        module="guard/inprocess/__init__.py",
        original=EVERY_GUARD,
        broken=_without("botocore"),
        tests=(PROOF,),
        check=_red("test_boto3_swallowed"),
    ),
    Mutation(
        name="the azure-core naming hook is never installed",
        module="guard/inprocess/__init__.py",
        original=EVERY_GUARD,
        broken=_without("azure-core"),
        tests=(PROOF,),
        check=_red("test_azure_swallowed"),
    ),
    # The one place that decides: without it every swallowed in-process reach passes (a
    # Python child installs its own guards from the sitecustomize: with this copy, none).
    Mutation(
        name="the socket guard is never installed",
        module="guard/inprocess/__init__.py",
        original=EVERY_GUARD,
        broken=_without("socket"),
        tests=(PROOF,),
        check=_red(*IN_PROCESS),
    ),
    Mutation(
        name="the seal does not put the guards' sitecustomize on PYTHONPATH",
        module="guard/seal.py",
        original="    site = str(SITECUSTOMIZE_DIR)\n",
        broken='    site = "/nonexistent"\n',
        tests=(PROOF,),
        check=_red("test_python_child_boto3"),
    ),
    # Without the sentinel credentials botocore raises NoCredentialsError before any request:
    # a call on the shell's (dropped) credentials is swallowed unseen.
    Mutation(
        name="the seal sets no sentinel credentials",
        module="guard/seal.py",
        original="        return dict(SENTINELS)\n",
        broken="        return {}\n",
        tests=(
            "tests/pytest_plugin/test_plugin_ambient.py::"
            "test_a_call_on_ambient_credentials_is_recorded_naming_its_operation",
        ),
        check=_red("test_boto3_client_on_ambient_credentials"),
    ),
    # Refusals still raise, but nothing is kept: every swallowed reach passes.
    Mutation(
        name="a refusal raises but its record reaches no keeper",
        module="guard/reach.py",
        original="    local = _local.get(address)\n",
        broken="    return None\n    local = _local.get(address)\n",
        tests=(PROOF,),
        check=_red(*IN_PROCESS),
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_an_in_process_guard_turns_the_proof_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)


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

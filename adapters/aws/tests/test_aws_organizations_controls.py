"""Negative controls for the organization sweep: break a rule in a copy of cloudguard_aws;
the named tests must go red for that reason (tests/adapter_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from adapter_mutants import assert_adapter_turns_red
from cloudguard_mutants import Mutation

TESTS = "adapters/aws/tests/test_aws_organizations.py"

MUTATIONS = [
    Mutation(
        name="an account that cannot be entered is dropped silently",
        module="organizations.py",
        original="    failures = [e.failure for e in entered if e.failure is not None]\n",
        broken="    failures = []\n",
        tests=(
            f"{TESTS}::test_an_account_whose_role_cannot_be_assumed_is_named_and_the_run_is_75",
        ),
        reason="an account that could not be entered was not named",
    ),
    Mutation(
        name="a region that cannot be read is dropped silently",
        module="organizations.py",
        original='return _failed(f"{member.account.source} region {region}", '
        "describe_error(error))",
        broken="return SweepResult(())",
        tests=(f"{TESTS}::test_a_region_that_cannot_be_read_is_named_and_the_run_is_75",),
        reason="an unreadable region was not named",
    ),
    Mutation(
        name="suspended accounts are entered too",
        module="organizations.py",
        original='    return state is None or state == "ACTIVE"',
        broken="    return True",
        tests=(
            f"{TESTS}::test_every_active_account_is_entered_with_its_role_and_swept_in_its_regions",
        ),
        reason="a suspended account was entered, or an active one skipped",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_rule_turns_its_tests_red(tmp_path: Path, mutation: Mutation) -> None:
    assert_adapter_turns_red(tmp_path, "cloudguard_aws", mutation)

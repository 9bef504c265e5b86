"""Negative controls for the organization sweep: break a rule in a copy of cloudguard_aws;
each named test must fail at its named check (harness: tests/cloudguard_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import cloudguard_aws
import pytest
from cloudguard_mutants import AWS_SDKS, Mutation, assert_turns_red

AWS = Path(cloudguard_aws.__file__).resolve().parent
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
        check="an-unentered-account-is-named",
        package=AWS,
    ),
    Mutation(
        name="a region that cannot be read is dropped silently",
        module="organizations.py",
        original='return _failed(f"{member.account.source} region {region}", '
        "describe_error(error))",
        broken="return SweepResult(())",
        tests=(f"{TESTS}::test_a_region_that_cannot_be_read_is_named_and_the_run_is_75",),
        check="an-unreadable-region-is-named",
        package=AWS,
    ),
    Mutation(
        name="suspended accounts are entered too",
        module="organizations.py",
        original='    return state is None or state == "ACTIVE"',
        broken="    return True",
        tests=(
            f"{TESTS}::test_every_active_account_is_entered_with_its_role_and_swept_in_its_regions",
        ),
        check="active-accounts-only",
        package=AWS,
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_rule_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS, AWS_SDKS)

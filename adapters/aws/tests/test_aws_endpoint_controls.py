"""Negative controls for the endpoints of AWS's other services (Resource Explorer, the Price
List Query API): skip the endpoint rule for one of them in a copy of cloudguard_aws; the
attack test, whose real listener records what it is sent, must fail at its named check: the
operator's keys reached it (harness: tests/cloudguard_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import cloudguard_aws
import pytest
from cloudguard_mutants import AWS_SDKS, Mutation, assert_turns_red

AWS = Path(cloudguard_aws.__file__).resolve().parent
TEST = (
    "adapters/aws/tests/test_aws_loopback_trust.py"
    "::test_the_operators_keys_never_reach_a_loopback_price_list_or_explorer"
)
CHECK = "no-operator-key-at-a-loopback-endpoint"

MUTATIONS = [
    Mutation(
        name="a dead endpoint spends the whole AWS retry budget",
        module="session.py",
        original='    client.meta.events.register_first("needs-retry", connect_budget)\n',
        broken="",
        tests=(
            "adapters/aws/tests/test_aws_throttling.py"
            "::test_a_dead_endpoint_is_given_up_in_a_few_quick_tries",
        ),
        check="a-dead-endpoint-fails-fast",
        package=AWS,
    ),
    Mutation(
        name="Resource Explorer's endpoint is not judged",
        module="explorer.py",
        original="    credential_for(ENDPOINTS, endpoint, request.credential)\n",
        broken="",
        tests=(TEST,),
        check=CHECK,
        package=AWS,
    ),
    Mutation(
        name="the price list's session is the factory's, wherever it goes",
        module="prices.py",
        original="            session = open_session(self.request, self.session_factory)\n",
        broken="            session = self.session_factory(self.request)\n",
        tests=(TEST,),
        check=CHECK,
        package=AWS,
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_rule_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS, AWS_SDKS)

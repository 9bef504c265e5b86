"""Negative controls for the one rule of where a credential may go (cloudguard.cloud.endpoints).

Each mutation breaks the rule in a copy of cloudguard; the attack tests of
both adapters, whose real listeners record what they are sent, must fail
at the check that the operator's credential reached them (tests/cloudguard_mutants.py).
"""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

AWS = "adapters/aws/tests/test_aws_loopback_trust.py"
AZURE = "adapters/azure/tests/test_azure_loopback_trust.py"

MUTATIONS = [
    Mutation(
        name="a loopback endpoint takes any credential",
        module="cloud/endpoints.py",
        original="        if fake:\n            return True\n        raise EndpointRefused(",
        broken="        if True:\n            return fake\n        raise EndpointRefused(",
        tests=(
            f"{AWS}::test_the_operators_keys_never_reach_a_loopback_endpoint",
            f"{AZURE}::test_a_real_credential_never_gets_a_token_for_a_loopback_endpoint",
        ),
        check={
            f"{AWS}::test_the_operators_keys_never_reach_a_loopback_endpoint": (
                "no-real-key-to-a-loopback-endpoint"
            ),
            f"{AZURE}::test_a_real_credential_never_gets_a_token_for_a_loopback_endpoint": (
                "no-real-token-to-a-loopback-endpoint"
            ),
        },
    ),
    Mutation(
        name="an unknown host takes a real credential",
        module="cloud/endpoints.py",
        original='if parts.scheme != "https" or parts.username or not rule.hosts.fullmatch(host):',
        broken="if False:",
        tests=(f"{AWS}::test_real_keys_go_only_to_the_clouds_own_endpoints_over_https",),
        check="real-keys-only-to-the-clouds-own",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_rule_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)

"""Negative controls for the Resource Graph engine: break a rule in a copy of cloudguard_azure;
each named test must fail at its named check (harness: tests/cloudguard_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import cloudguard_azure
import pytest
from cloudguard_mutants import AZURE_SDKS, Mutation, assert_turns_red

AZURE = Path(cloudguard_azure.__file__).resolve().parent
TESTS = "adapters/azure/tests/test_azure_resource_graph.py"

MUTATIONS = [
    Mutation(
        name="subscriptions Resource Graph cannot see are not checked",
        module="resource_graph.py",
        original="unreadable = [sub for sub in batch if sub.casefold() not in visible]",
        broken="unreadable = []",
        tests=(
            f"{TESTS}::test_a_subscription_resource_graph_cannot_see_is_named_and_the_run_is_75"
            "[every-kind]",
            f"{TESTS}::test_a_subscription_resource_graph_cannot_see_is_named_and_the_run_is_75"
            "[vms]",
        ),
        check="an-unseen-subscription-is-unread",
        package=AZURE,
    ),
    Mutation(
        name="a spent quota is not waited for",
        module="resource_graph.py",
        original="            if delay <= 0:\n                return\n",
        broken="            if True:\n                return\n",
        tests=(
            f"{TESTS}::test_a_spent_quota_is_waited_for_before_the_next_query",
            f"{TESTS}::test_a_429_with_the_quota_drained_waits_for_the_announced_reset",
        ),
        check="the-spent-quota-is-waited-for",
        package=AZURE,
    ),
    # A truncated answer is caught twice (the resultTruncated flag, then the row count):
    # the control breaks both.
    Mutation(
        name="resultTruncated ignored and rows not counted",
        module="resource_graph.py",
        original="    if seen != expected:\n",
        broken="    if False:\n",
        also=(
            (
                "resource_graph.py",
                'if normalise.text(page.result_truncated).lower() == "true":',
                "if False:",
            ),
        ),
        tests=(f"{TESTS}::test_a_truncated_answer_without_skip_token_fails_the_batch",),
        check="a-truncated-answer-fails-the-batch",
        package=AZURE,
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_rule_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS, AZURE_SDKS)

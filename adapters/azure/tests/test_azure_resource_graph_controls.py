"""Negative controls for the Resource Graph engine: break a rule in a copy of
cloudguard_azure; the named tests must go red for that reason (tests/adapter_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from adapter_mutants import assert_adapter_turns_red
from cloudguard_mutants import Mutation

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
        reason="unreadable subscription not named",
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
        reason="queries sent while the quota was spent",
    ),
    Mutation(
        name="resultTruncated ignored and rows not counted",
        module="resource_graph.py",
        original="    if seen != expected:\n",
        broken="    if False:\n",
        tests=(f"{TESTS}::test_a_truncated_answer_without_skip_token_fails_the_batch",),
        reason="a truncated answer was reported",
    ),
]


# A truncated answer is caught twice (the resultTruncated flag, then the row count):
# the control breaks both.
ALSO = {
    "resultTruncated ignored and rows not counted": (
        ('if normalise.text(page.result_truncated).lower() == "true":', "if False:"),
    )
}


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_rule_turns_its_tests_red(tmp_path: Path, mutation: Mutation) -> None:
    assert_adapter_turns_red(tmp_path, "cloudguard_azure", mutation, ALSO.get(mutation.name, ()))

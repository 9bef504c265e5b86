"""Negative controls for the sweep's waiting rules: break each in a copy of cloudguard_azure;
each named test must fail at its named check (harness: tests/cloudguard_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import cloudguard_azure
import pytest
from cloudguard_mutants import AZURE_SDKS, Mutation, assert_turns_red

AZURE = Path(cloudguard_azure.__file__).resolve().parent
TESTS = "adapters/azure/tests/test_azure_throttling.py"

MUTATIONS = [
    Mutation(
        name="a dead endpoint spends the whole retry budget",
        module="retry.py",
        original="            retry_connect=min(budget.total, budget.connect_retries),\n",
        broken="            retry_connect=budget.total,\n",
        tests=(f"{TESTS}::test_a_connection_that_cannot_be_made_is_given_up_in_a_few_quick_tries",),
        check="a-dead-endpoint-fails-fast",
        package=AZURE,
    ),
    Mutation(
        name="the subscriptions of a sweep go untold",
        module="adapter.py",
        original=(
            "                    lambda sub: told(\n"
            "                        request,\n"
            '                        f"azure subscription {sub}",\n'
            "                        lambda: self._sweep_subscription(credential, request, sub),\n"
            "                    ),\n"
        ),
        broken=(
            "                    lambda sub: self._sweep_subscription(credential, request, sub),\n"
        ),
        tests=(f"{TESTS}::test_a_sweep_tells_each_subscription_as_it_goes",),
        check="a-sweep-says-each-scope",
        package=AZURE,
    ),
    Mutation(
        name="a dead endpoint waits the busy server's backoffs",
        module="retry.py",
        original="        if _last_failed_to_connect(settings):",
        broken="        if False:",
        tests=(f"{TESTS}::test_a_connection_that_cannot_be_made_is_given_up_in_a_few_quick_tries",),
        check="a-dead-endpoint-fails-fast",
        package=AZURE,
    ),
    Mutation(
        name="the retry budget stops at azure-core's default status counter",
        module="retry.py",
        original="            retry_status=budget.total,\n",
        broken="",
        tests=(f"{TESTS}::test_the_retry_budget_reaches_every_azure_core_counter",),
        check="the-budget-reaches-every-counter",
        package=AZURE,
    ),
    Mutation(
        name="Retry-After ignored: the backoff alone decides",
        module="retry.py",
        original="        if retry_after:\n",
        broken="        if False:\n",
        tests=(
            "adapters/azure/tests/test_azure_adapter.py::test_throttling_429_is_retried_after_retry_after",
        ),
        check="retry-after-honoured",
        package=AZURE,
    ),
    Mutation(
        name="a second attempt starts the listing over",
        module="paging.py",
        original="        while not self.done:\n",
        broken="        self.next_link, self.pages, self.resources = None, 0, []\n"
        "        while not self.done:\n",
        tests=(f"{TESTS}::test_a_page_that_fails_twice_resumes_without_rereading_earlier_pages",),
        check="a-failed-page-resumes",
        package=AZURE,
    ),
    Mutation(
        name="the time budget is never kept",
        module="budget.py",
        original="if elapsed + seconds > self.budget.time_budget:",
        broken="if False:",
        # and no attempt refused, nor its timeouts cut, once the budget is spent (the reaper's
        # rule, which a sweep shares): broken alone, either is covered by the other.
        also=(
            (
                "budget.py",
                "        return max(0.0, self.budget.time_budget - (time.monotonic() - self.started"
                "))\n",
                "        return 3600.0\n",
            ),
        ),
        tests=(
            f"{TESTS}::test_a_subscription_past_its_time_budget_is_named_and_the_audit_did_not_run",
        ),
        check="the-time-budget-is-kept",
        package=AZURE,
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_a_waiting_rule_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS, AZURE_SDKS)

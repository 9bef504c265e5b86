"""Negative controls for prices from the clouds' lists: break a rule in a copy of the package
(the adapter's or the core's); the named tests must fail at their named checks (harness:
tests/cloudguard_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import cloudguard_azure
import pytest
from cloudguard_mutants import AZURE_SDKS, Mutation, assert_turns_red

AZURE = Path(cloudguard_azure.__file__).resolve().parent
TESTS = "adapters/azure/tests/test_azure_prices.py"

ADAPTER = [
    Mutation(
        name="any meter of the size is its price",
        module="prices.py",
        original='not any(word in names for word in ("Windows", "Spot", "Low Priority"))',
        broken="True",
        tests=(f"{TESTS}::test_a_live_audit_prices_from_the_retail_list_with_its_date",),
        check="the-pay-as-you-go-linux-meter",
        package=AZURE,
    ),
    Mutation(
        name="any monthly meter of a disk's tier is its price",
        module="prices.py",
        original='str(item["meterName"]).endswith(("Disk", "Disks"))',
        broken="True",
        tests=(f"{TESTS}::test_a_live_audit_prices_from_the_retail_list_with_its_date",),
        check="a-disk-priced-by-its-tier-meter",
        package=AZURE,
    ),
    Mutation(
        name="a faked endpoint sends its questions to the public list",
        module="prices.py",
        original="        if request.endpoint:\n            return None",
        broken="        if False:\n            return None",
        tests=(
            f"{TESTS}::test_a_faked_management_endpoint_never_sends_its_questions_to_the_public_list",
        ),
        check="no-question-to-the-public-list",
        package=AZURE,
    ),
]
CORE = [
    Mutation(
        name="a fresh cache is asked again",
        module="audit/price_lists.py",
        original=(
            '            return date.fromisoformat(str(entry.get("fetched"))) '
            "< self.today - MAX_AGE\n"
        ),
        broken="            return True\n",
        tests=(f"{TESTS}::test_prices_are_kept_in_a_dated_private_cache_and_not_asked_again",),
        check="a-fresh-cache-is-not-asked",
    ),
]


MUTATIONS = [*ADAPTER, *CORE]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_a_price_rule_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS, AZURE_SDKS)

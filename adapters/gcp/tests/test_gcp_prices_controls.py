"""Negative controls for Google Cloud's prices from the Cloud Billing Catalog: break a rule in
a copy of cloudguard_gcp (or of the core, whose cache it is); the named test must fail at its
named check (harness: tests/cloudguard_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import cloudguard_gcp
import pytest
from cloudguard_mutants import GCP_SDKS, Mutation, assert_turns_red

GCP = Path(cloudguard_gcp.__file__).resolve().parent
PRICES = "adapters/gcp/tests/test_gcp_prices.py::"
INCIDENT = PRICES + "test_the_incident_vm_is_priced_from_every_page_of_the_catalog_in_its_region"
KINDS = "adapters/gcp/tests/test_gcp_price_kinds.py::"
ADDRESS = KINDS + "test_an_external_address_is_priced_at_its_own_sku_reserved_or_in_use"
UNPRICED_ADDRESS = (
    KINDS + "test_an_address_the_catalog_or_its_record_does_not_price_is_unknown_never_zero"
)
SNAPSHOT = KINDS + "test_a_snapshot_is_priced_per_gib_month_of_its_class_where_it_is_stored"
UNPRICED_SNAPSHOT = KINDS + "test_a_snapshot_with_no_sku_where_it_is_stored_is_unknown_never_zero"

MUTATIONS = [
    Mutation(
        name="only the catalog's first page is read",
        module="prices.py",
        original="        for number, page in enumerate(pager.pages, start=1):\n",
        broken="        for number, page in enumerate([next(iter(pager.pages))], start=1):\n",
        tests=(INCIDENT,),
        check="every-page-read",
        package=GCP,
    ),
    Mutation(
        name="a SKU of another region is the price",
        module="prices.py",
        original="        if named and rate.unit == unit and wanted in rate.regions:\n",
        broken="        if named and rate.unit == unit:\n",
        tests=(INCIDENT,),
        check="priced-in-its-region",
        package=GCP,
    ),
    Mutation(
        name="a machine type or region the catalog does not price costs zero",
        module="prices.py",
        original="        return None  # unknown, never zero: no shape, or no rate in its region\n",
        broken="        return ListedPrice(0.0, CURRENCY, SOURCE, fetched)\n",
        tests=(PRICES + "test_a_type_or_region_the_catalog_does_not_price_is_unknown_never_zero",),
        check="unknown-never-zero",
        package=GCP,
    ),
    Mutation(
        name="a faked management endpoint sends its questions to Google's catalog",
        module="prices.py",
        original="    if endpoint is None and request.endpoint:\n        return None",
        broken="    if False:\n        return None",
        tests=(
            PRICES
            + "test_a_faked_management_endpoint_never_sends_its_questions_to_the_public_catalog",
        ),
        check="no-question-to-the-public-catalog",
        package=GCP,
    ),
    Mutation(
        name="a --gcp-key-file sweep reads prices with application default credentials",
        module="prices.py",
        original="        if self.key_file:\n",
        broken="        if False:\n",
        tests=(PRICES + "test_the_catalog_is_read_with_the_sweeps_key_file_when_one_is_given",),
        check="prices-use-the-sweeps-identity",
        package=GCP,
    ),
    Mutation(
        name="an address in use is priced as one reserved and used by nothing",
        module="prices.py",
        original='        sku = RESERVED if address["state"] == "reserved" else IN_USE\n',
        broken="        sku = RESERVED\n",
        tests=(ADDRESS,),
        check="address-priced-at-its-sku",
        package=GCP,
    ),
    Mutation(
        name="an internal address is priced as an external one",
        module="prices.py",
        original='    if address is not None and address["where"] == "external":\n',
        broken="    if address is not None:\n",
        tests=(UNPRICED_ADDRESS,),
        check="unpriced-address-unknown",
        package=GCP,
    ),
    Mutation(
        name="a global address in use is priced as a standard VM's",
        module="prices.py",
        original=(
            "    if stem is None or (query.sku == IN_USE and "
            'query.region.casefold() == "global"):\n'
        ),
        broken="    if stem is None:\n",
        tests=(UNPRICED_ADDRESS,),
        check="unpriced-address-unknown",
        package=GCP,
    ),
    Mutation(
        name="a SKU's free first tier is its price",
        module="prices.py",
        original="    paid = [tier.unit_price for tier in tiers if _amount(tier.unit_price) > 0]\n",
        broken="    paid = [tier.unit_price for tier in tiers]\n",
        tests=(ADDRESS, SNAPSHOT + "[standard-region]"),
        check={
            ADDRESS: "address-priced-at-its-sku",
            SNAPSHOT + "[standard-region]": "snapshot-priced-where-stored",
        },
        package=GCP,
    ),
    Mutation(
        name="a snapshot in eu is looked up as eu, not as the catalog's europe",
        module="prices.py",
        original='_MULTI_REGIONS = {"us": "us", "eu": "europe", "asia": "asia"}\n',
        broken='_MULTI_REGIONS = {"us": "us", "eu": "eu", "asia": "asia"}\n',
        tests=(SNAPSHOT + "[standard-eu]",),
        check="snapshot-priced-where-stored",
        package=GCP,
    ),
    Mutation(
        name="an archive snapshot is priced as a standard one",
        module="prices.py",
        original='        return PriceQuery(kinds.SNAPSHOT, snapshot["type"], resource.region,\n',
        broken='        return PriceQuery(kinds.SNAPSHOT, "standard", resource.region,\n',
        tests=(SNAPSHOT + "[archive-region]", SNAPSHOT + "[archive-paris]"),
        check="snapshot-priced-where-stored",
        package=GCP,
    ),
    Mutation(
        name="a snapshot where the catalog has no SKU of its class costs zero",
        module="prices.py",
        original="        return None  # unknown, never zero: no SKU of its class there\n",
        broken="        return ListedPrice(0.0, CURRENCY, SOURCE, fetched)\n",
        tests=(UNPRICED_SNAPSHOT,),
        check="unpriced-snapshot-unknown",
        package=GCP,
    ),
    Mutation(
        name="the catalog's pages are never retried (--retries ignored)",
        module="prices.py",
        original="        retrying: Any = clients.retry_spending(self.retries)\n",
        broken="        retrying: Any = clients.retry_spending(0)\n",
        tests=(PRICES + "test_an_unreadable_catalog_is_a_warning_not_a_failed_audit",),
        check="price-list-retried",
        package=GCP,
    ),
    Mutation(
        name="a catalog 429's Retry-After is ignored: the page asked again after the backoff",
        module="clients.py",
        original="    return min(BACKOFF_MAX, max(backoff, retry_after(exc)))\n",
        broken="    return min(BACKOFF_MAX, backoff)\n",
        tests=(PRICES + "test_a_throttled_catalog_page_waits_what_retry_after_asks",),
        check="price-retry-after-obeyed",
        package=GCP,
    ),
    Mutation(
        name="the price cache is ignored: every audit asks the catalog again",
        module="audit/price_lists.py",
        original=(
            "            stale = [q for q in queries.values() if self._stale(entries.get(q.key))]\n"
        ),
        broken="            stale = list(queries.values())\n",
        tests=(PRICES + "test_the_cache_answers_the_second_audit_without_a_request",),
        check="the-cache-answers-the-second-audit",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_a_gcp_price_rule_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS, GCP_SDKS)

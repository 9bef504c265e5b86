"""Negative controls for Google Cloud's prices from the Cloud Billing Catalog: break a rule in
a copy of cloudguard_gcp (or of the core, whose cache it is); the named test must fail at its
named check (harness: tests/cloudguard_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import cloudguard_gcp
import pytest
from cloudguard_mutants import Mutation, assert_turns_red

GCP = Path(cloudguard_gcp.__file__).resolve().parent
PRICES = "adapters/gcp/tests/test_gcp_prices.py::"
INCIDENT = PRICES + "test_the_incident_vm_is_priced_from_every_page_of_the_catalog_in_its_region"

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
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)

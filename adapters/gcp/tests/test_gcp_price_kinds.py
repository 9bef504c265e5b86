"""Reserved addresses and snapshots priced from the Cloud Billing Catalog API: the audit of
Resources spelled as the live sweep spells them, priced by the real `google-cloud-billing`
client (REST) from the fake catalog on 127.0.0.1 (fake_billing: the IP address and snapshot
SKUs in their documented shapes, free first tiers included). What the catalog has no SKU
for, or the record does not say, is unknown, never zero."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cloudguard_gcp.prices import price_query
from fake_billing import FakeBilling, serve
from named_checks import broken
from test_gcp_prices import LABELS, cache_file, catalog_skus, price_lists

from cloudguard.audit.auditor import run_audit
from cloudguard.audit.cost import bundled_prices
from cloudguard.audit.evidence.interface import EvidenceRequest
from cloudguard.audit.formats.json_report import JsonFormat
from cloudguard.cloud import kinds
from cloudguard.cloud.pricing import HOURS_PER_MONTH, PriceQuery
from cloudguard.cloud.records import Resource, SweepResult
from cloudguard.documents.findings import AuditPolicy

HOURS = HOURS_PER_MONTH


@pytest.fixture
def billing(tmp_path: Path) -> Iterator[FakeBilling]:
    with serve(tmp_path) as fake:
        fake.skus = catalog_skus()
        fake.page_size = 4  # the IP and snapshot SKUs on pages of their own
        yield fake


def resource(name: str, kind: str, size: str, region: str) -> Resource:
    return Resource(provider="gcp", account="pilot", region=region, group="", id=f"{kind}/{name}",
                    name=name, kind=kind, size=size, power_state="unknown", created=None,
                    tags=LABELS, source="gcp:projects/pilot")  # fmt: skip


def address(name: str, size: str, region: str = "us-central1") -> Resource:
    return resource(name, kinds.PUBLIC_IP, size, region)


def snapshot(name: str, size: str, location: str) -> Resource:
    """A snapshot as the sweep will spell it: its class and storageBytes / 2**30 (:g, two
    decimals), in its first storageLocations entry."""
    return resource(name, kinds.SNAPSHOT, size, location)


class Swept:
    """Resources already read (an Inventory): what a live sweep hands the audit."""

    def __init__(self, *resources: Resource) -> None:
        self.resources = resources

    def read(self) -> SweepResult:
        return SweepResult(self.resources)


def audited(billing: FakeBilling, *resources: Resource) -> dict[str, dict[str, Any]]:
    """Each resource's cost in the audit's JSON report, priced from the fake catalog."""
    report = run_audit([Swept(*resources)], EvidenceRequest(), AuditPolicy(), bundled_prices(),
                       datetime.now(UTC), price_lists=price_lists(billing))  # fmt: skip
    document = json.loads(JsonFormat().render(report))
    return {f["resource"]["name"]: f["cost"] for f in document["findings"]}


def test_an_external_address_is_priced_at_its_own_sku_reserved_or_in_use(
    billing: FakeBilling,
) -> None:
    reserved = address("ip-left", "external, reserved, used by nothing")
    frankfurt = address("ip-far", "external, reserved, used by nothing", "europe-west3")
    in_use = address("ip-used", "external, in use, used by vm-1")

    cost = audited(billing, reserved, frankfurt, in_use)

    # Static Ip Charge: $0.010 an hour past its free first hour, in the address's region.
    assert cost["ip-left"]["hourly"] == pytest.approx(0.01), broken(
        "address-priced-at-its-sku", f"reserved, used by nothing: {cost['ip-left']}"
    )
    assert cost["ip-far"]["hourly"] == pytest.approx(0.013), broken(
        "address-priced-at-its-sku", f"reserved in europe-west3: {cost['ip-far']}"
    )
    # In use: the global standard VM's SKU past its free 744 h, not the Spot VM's.
    assert cost["ip-used"]["hourly"] == pytest.approx(0.005), broken(
        "address-priced-at-its-sku", f"in use: {cost['ip-used']}"
    )
    assert cost["ip-left"]["source"].startswith("Cloud Billing Catalog API, ")
    entries = json.loads(cache_file().read_text())["entries"]
    assert "Static Ip Charge, per hour (reserved" in entries[
        "public-ip|external-reserved|us-central1"]["detail"]  # fmt: skip
    assert entries["public-ip|external-in-use|us-central1"]["detail"].startswith(
        "External IP Charge on a Standard VM"
    )


def test_an_address_the_catalog_or_its_record_does_not_price_is_unknown_never_zero(
    billing: FakeBilling,
) -> None:
    unpriced = (
        address("ip-internal", "internal, reserved, used by nothing"),  # no SKU says free
        address("ip-nowhere", "external, reserved, used by nothing", "me-central2"),
        address("ip-global", "external, in use, used by fr-1", "global"),  # a forwarding rule's
        address("ip-reserving", "external, reserving, used by nothing"),
        address("ip-exported", ""),  # a gcloud export's row says neither
    )

    cost = audited(billing, *unpriced)

    for one in unpriced:
        assert cost[one.name]["hourly"] is None, broken(
            "unpriced-address-unknown", f"{one.name} ({one.size!r}) priced at {cost[one.name]}"
        )


@pytest.mark.parametrize(
    ("size", "location", "per_gib_month"),
    [
        # Past the free 5 GiB tier, in the Americas' regions; in Paris; the US multi-region;
        # `eu`, which the catalog's serviceRegions call europe.
        pytest.param("standard 12.5 GiB stored", "us-central1", 0.05, id="standard-region"),
        pytest.param("standard 12.5 GiB stored", "europe-west9", 0.058, id="standard-paris"),
        pytest.param("standard 12.5 GiB stored", "us", 0.065, id="standard-us"),
        pytest.param("standard 12.5 GiB stored", "eu", 0.065, id="standard-eu"),
        pytest.param("archive 12.5 GiB stored", "us-central1", 0.019, id="archive-region"),
        pytest.param("archive 12.5 GiB stored", "europe-west9", 0.022, id="archive-paris"),
    ],
)
def test_a_snapshot_is_priced_per_gib_month_of_its_class_where_it_is_stored(
    billing: FakeBilling, size: str, location: str, per_gib_month: float
) -> None:
    cost = audited(billing, snapshot("snap-1", size, location))["snap-1"]

    assert cost["hourly"] == pytest.approx(12.5 * per_gib_month / HOURS), broken(
        "snapshot-priced-where-stored", f"{size} in {location}: {cost}"
    )


def test_a_snapshot_with_no_sku_where_it_is_stored_is_unknown_never_zero(
    billing: FakeBilling,
) -> None:
    unpriced = (
        snapshot("snap-asia", "standard 3 GiB stored", "asia"),  # no SKU in the fake's catalog
        snapshot("snap-far", "standard 3 GiB stored", "me-central2"),
        # No description of a multi-regional archive SKU was found: unknown, not a guess.
        snapshot("snap-archive-us", "archive 3 GiB stored", "us"),
        snapshot("snap-exported", "", "us-central1"),
    )

    cost = audited(billing, *unpriced)

    for one in unpriced:
        assert cost[one.name]["hourly"] is None, broken(
            "unpriced-snapshot-unknown", f"{one.name} in {one.region} priced at {cost[one.name]}"
        )


@pytest.mark.parametrize(
    ("record", "query"),
    [
        (address("a", "external, reserved, used by nothing"),
         PriceQuery(kinds.PUBLIC_IP, "external-reserved", "us-central1")),
        (address("a", "external, in use, used by vm-1, vm-2"),
         PriceQuery(kinds.PUBLIC_IP, "external-in-use", "us-central1")),
        (address("a", "internal, in use, used by vm-1"), None),
        (address("a", ""), None),
        (snapshot("s", "standard 12.5 GiB stored", "eu"),
         PriceQuery(kinds.SNAPSHOT, "standard", "eu", 12.5)),
        (snapshot("s", "archive 1e+03 GiB stored", "us"), None),  # not a size the sweep writes
        (snapshot("s", "archive 1024 GiB stored", "us"),
         PriceQuery(kinds.SNAPSHOT, "archive", "us", 1024.0)),
        (snapshot("s", "12.5 GiB", "us"), None),
    ],
)  # fmt: skip
def test_the_query_comes_from_the_size_the_sweep_writes(
    record: Resource, query: PriceQuery | None
) -> None:
    assert price_query(record) == query

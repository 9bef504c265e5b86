"""Prices from Google Cloud's own list: the Cloud Billing Catalog API, read by the real
`google-cloud-billing` client (REST) from a fake on 127.0.0.1 over TLS, in its documented
shapes, through the dated cache; a machine type or region the catalog does not price is
unknown, never zero."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cloudguard_gcp.machine_types import Shape, shape_of
from cloudguard_gcp.prices import BillingCatalog, price_list, price_query
from fake_billing import FakeBilling, address_skus, serve, sku, snapshot_skus
from gcp_helpers import cli, instance, victim_key
from named_checks import broken

from cloudguard.audit.auditor import run_audit
from cloudguard.audit.cost import bundled_prices
from cloudguard.audit.evidence.interface import EvidenceRequest
from cloudguard.audit.formats.json_report import JsonFormat
from cloudguard.audit.inventory_files import InventoryFile
from cloudguard.audit.price_lists import LIVE, PriceLists
from cloudguard.cloud import kinds
from cloudguard.cloud.pricing import PriceListError, PriceQuery
from cloudguard.cloud.records import Resource, SweepRequest
from cloudguard.documents.findings import AuditPolicy

CATALOG = "Cloud Billing Catalog API"
INCIDENT_VM = "vm-fm7c799d-wkr-01"
LABELS = {"task-id": "cloud-noenv-c7"}
# N2 in us-central1 (Americas), as Google lists it: n2-standard-4 = 4 x 0.031611 + 16 x 0.004237.
N2_STANDARD_4 = 4 * 0.031611 + 16 * 0.004237


def catalog_skus() -> list[dict[str, Any]]:
    """Compute Engine's SKUs, the ones that are not the price first: EMEA's N2 rates (another
    region), Spot, a commitment, sole tenancy, custom, disks, addresses, snapshots;
    Americas' N2 rates last, on the last page."""
    return [
        sku("N2 Instance Core running in EMEA", 0.034773, place="EMEA"),
        sku("N2 Instance Ram running in EMEA", 0.004661, place="EMEA", unit="GiBy.h", group="RAM"),
        sku("Spot Preemptible N2 Instance Core running in Americas", 0.0077,
            usage_type="Preemptible"),
        sku("Commitment v1: N2 Cpu in Americas for 1 Year", 0.019915, usage_type="Commit1Yr"),
        sku("N2 Sole Tenancy Instance Core running in Americas", 0.0348),
        sku("N2 Custom Instance Core running in Americas", 0.033174),
        sku("N2 Custom Instance Ram running in Americas", 0.004446, unit="GiBy.h", group="RAM"),
        sku("E2 Instance Core running in Americas", 0.021811),
        sku("E2 Instance Ram running in Americas", 0.002923, unit="GiBy.h", group="RAM"),
        sku("Balanced PD Capacity", 0.1, unit="GiBy.mo", family="Storage", group="SSD"),
        sku("Regional Balanced PD Capacity", 0.2, unit="GiBy.mo", family="Storage", group="SSD"),
        *address_skus(),
        *snapshot_skus(),
        sku("N2 Instance Core running in Americas", 0.031611),
        sku("N2 Instance Ram running in Americas", 0.004237, unit="GiBy.h", group="RAM"),
    ]  # fmt: skip


@pytest.fixture
def billing(tmp_path: Path) -> Iterator[FakeBilling]:
    with serve(tmp_path) as fake:
        fake.skus = catalog_skus()
        fake.page_size = 4  # 24 SKUs: six pages, Americas' N2 rates on the last
        yield fake


def export(tmp_path: Path, *vms: tuple[str, str, str]) -> Path:
    """`gcloud compute instances list` of (name, machine type, zone), each labelled."""
    path = tmp_path / "instances.json"
    listing = [instance(n, labels=LABELS, machine_type=t, zone=z) for n, t, z in vms]
    path.write_text(json.dumps(listing))
    return path


def price_lists(billing: FakeBilling, *, retries: int = 10) -> PriceLists:
    """`--prices live`, its GCP list the fake catalog read with `--credential fake-gcp`, as
    the CLI sends it with `--billing-catalog-endpoint`."""
    request = SweepRequest(credential="fake-gcp", ca_bundle=billing.ca_bundle, retries=retries,
                           settings={"billing_catalog_endpoint": billing.url})  # fmt: skip
    return PriceLists(LIVE, {"gcp": price_list(request)})


def audit(billing: FakeBilling, inventory: Path, *, retries: int = 10) -> dict[str, Any]:
    """The audit engine the CLI runs, priced from the fake catalog: its JSON report."""
    lists = price_lists(billing, retries=retries)
    report = run_audit([InventoryFile(str(inventory))], EvidenceRequest(), AuditPolicy(),
                       bundled_prices(), datetime.now(UTC), price_lists=lists)  # fmt: skip
    document: dict[str, Any] = json.loads(JsonFormat().render(report))
    return document


def costs(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["resource"]["name"]: f["cost"] for f in report["findings"]}


def cache_file() -> Path:
    return Path(os.environ["XDG_CACHE_HOME"]) / "cloudguard" / "prices" / "gcp.json"


def test_the_incident_vm_is_priced_from_every_page_of_the_catalog_in_its_region(
    billing: FakeBilling, tmp_path: Path
) -> None:
    report = audit(billing, export(tmp_path, (INCIDENT_VM, "n2-standard-4", "us-central1-a")))

    cost = costs(report)[INCIDENT_VM]
    pages = [request.query.get("pageToken", "") for request in billing.requests]
    assert pages == ["", "4", "8", "12", "16", "20"], broken(
        "every-page-read", f"pages asked: {pages}; priced {cost}"
    )
    assert cost["hourly"] is not None, broken("every-page-read", f"unpriced: {cost}")
    assert cost["hourly"] == pytest.approx(N2_STANDARD_4), broken(
        "priced-in-its-region", f"n2-standard-4 in us-central1 priced at {cost}"
    )
    assert cost["source"] == f"{CATALOG}, {datetime.now(UTC).date().isoformat()}"
    assert report["prices"]["sources"] == {cost["source"]: 1}
    # One listing for the audit: Compute Engine's SKUs in USD, the API's largest page,
    # and no token sent to loopback (anonymous credentials carry none).
    assert all(r.path == "/v1/services/6F81-5844-456A/skus" for r in billing.requests)
    assert all(r.query.get("currencyCode") == "USD" for r in billing.requests)
    assert all(r.query.get("pageSize") == "5000" for r in billing.requests)
    assert not any(r.authorized for r in billing.requests)
    entry = json.loads(cache_file().read_text())["entries"]["vm|n2-standard-4|us-central1"]
    assert "4 x N2 Instance Core running in Americas" in entry["detail"]
    assert "16 GiB x N2 Instance Ram running in Americas" in entry["detail"]


def test_a_type_or_region_the_catalog_does_not_price_is_unknown_never_zero(
    billing: FakeBilling, tmp_path: Path
) -> None:
    inventory = export(tmp_path, ("vm-new-series", "n9-standard-4", "us-central1-a"),
                       ("vm-far-away", "n2-standard-4", "me-central2-a"))  # fmt: skip

    report = audit(billing, inventory)

    findings = {f["resource"]["name"]: f for f in report["findings"]}
    for name in ("vm-new-series", "vm-far-away"):
        assert findings[name]["cost"]["hourly"] is None, broken(
            "unknown-never-zero", f"{name} priced at {findings[name]['cost']}"
        )
        assert findings[name]["billable"] is True
    assert report["summary"]["unpriced_billable"] == 2
    entries = json.loads(cache_file().read_text())["entries"]
    assert entries["vm|n9-standard-4|us-central1"]["missing"] is True  # not asked again


def test_the_cache_answers_the_second_audit_without_a_request(
    billing: FakeBilling, tmp_path: Path
) -> None:
    inventory = export(tmp_path, (INCIDENT_VM, "n2-standard-4", "us-central1-a"))
    audit(billing, inventory)
    billing.requests.clear()

    again = audit(billing, inventory)

    asked = len(billing.requests)
    assert asked == 0, broken(
        "the-cache-answers-the-second-audit", f"the catalog was asked {asked} times"
    )
    assert costs(again)[INCIDENT_VM]["hourly"] == pytest.approx(N2_STANDARD_4)
    # An audit of files reads the cache, never the network.
    done = cli("--inventory", str(inventory), "--format", "json")
    assert costs(json.loads(done.stdout))[INCIDENT_VM]["hourly"] == pytest.approx(N2_STANDARD_4)
    assert billing.requests == []


def test_a_real_credential_is_never_sent_to_a_loopback_catalog(
    billing: FakeBilling, tmp_path: Path
) -> None:
    """The option from the command line; the operator's identity (Application Default
    Credentials) is refused for a loopback catalog before any is looked up."""
    inventory = export(tmp_path, (INCIDENT_VM, "n2-standard-4", "us-central1-a"))

    done = cli("--inventory", str(inventory), "--prices", "live",
               "--billing-catalog-endpoint", billing.url, "--ca-bundle", billing.ca_bundle,
               "--format", "json")  # fmt: skip

    assert done.exit_code == 1, done.stderr
    report = json.loads(done.stdout)
    assert billing.requests == []
    (warning,) = [w for w in report["warnings"] if w.startswith(CATALOG)]
    assert "nothing sent" in warning and "would hand a real Google Cloud identity" in warning
    assert costs(report)[INCIDENT_VM]["hourly"] is None


def test_a_faked_management_endpoint_never_sends_its_questions_to_the_public_catalog(
    billing: FakeBilling,
) -> None:
    """Another --management-endpoint and no --billing-catalog-endpoint: no catalog at all
    (Google's would be a reach from a test)."""
    request = SweepRequest(endpoint=billing.url, credential="fake-gcp", ca_bundle=billing.ca_bundle)

    catalog = price_list(request)

    assert catalog is None, broken("no-question-to-the-public-catalog", f"asked: {catalog}")


@pytest.mark.parametrize(
    ("credential", "said"),
    [
        ("fake-gcp", "answers only a loopback"),  # the fake's credential off loopback
        ("my-profile", "is not one Google Cloud's prices are read with"),
    ],
)
def test_a_credential_that_may_not_go_to_googles_catalog_is_refused_with_nothing_sent(
    credential: str, said: str
) -> None:
    catalog = BillingCatalog(None, credential, None, retries=1)  # Google's own catalog

    with pytest.raises(PriceListError, match="nothing sent") as refused:
        catalog.prices([PriceQuery(kinds.VM, "n2-standard-4", "us-central1")])
    assert said in str(refused.value)


def test_an_unreadable_catalog_is_a_warning_not_a_failed_audit(
    billing: FakeBilling, tmp_path: Path
) -> None:
    billing.fail_status, billing.fail_times = 503, 100
    inventory = export(tmp_path, (INCIDENT_VM, "n2-standard-4", "us-central1-a"))

    report = audit(billing, inventory, retries=1)

    assert report["failures"] == []  # the audit ran: not 75
    assert any(f"{CATALOG} could not be read" in w for w in report["warnings"])
    assert costs(report)[INCIDENT_VM]["hourly"] is None
    asked = len(billing.requests)
    assert asked == 2, broken("price-list-retried", f"{asked} requests on --retries 1")


def test_a_throttled_catalog_page_waits_what_retry_after_asks(billing: FakeBilling) -> None:
    """The catalog's 429 says `Retry-After: 1`: the page is asked again no sooner (the
    backoff alone waits at most 0.5 s first), on the sweep's one retry and its budget."""
    settings = {"billing_catalog_endpoint": billing.url}
    catalog = price_list(SweepRequest(credential="fake-gcp", ca_bundle=billing.ca_bundle,
                                      retries=1, settings=settings))  # fmt: skip
    assert isinstance(catalog, BillingCatalog)
    vm = PriceQuery(kinds.VM, "n2-standard-4", "us-central1")
    catalog.prices([vm])  # warm: imports and the client are not the wait measured
    billing.requests.clear()
    billing.fail_status, billing.fail_times, billing.retry_after = 429, 1, "1"

    started = time.monotonic()
    answers = catalog.prices([vm])
    waited = time.monotonic() - started

    assert answers[vm.key] is not None, "the throttled page was not read on its retry"
    assert waited >= 1.0, broken(
        "price-retry-after-obeyed",
        f"the listing took {waited:.2f} s through a 429 of Retry-After: 1",
    )
    assert len(billing.requests) == 1 + 6  # the 429, then the six pages


def test_custom_shared_core_and_disk_prices_from_the_catalog(billing: FakeBilling) -> None:
    settings = {"billing_catalog_endpoint": billing.url}
    catalog = price_list(SweepRequest(credential="fake-gcp", ca_bundle=billing.ca_bundle,
                                      settings=settings))  # fmt: skip
    assert isinstance(catalog, BillingCatalog)
    custom = PriceQuery(kinds.VM, "n2-custom-4-16384", "us-central1")
    micro = PriceQuery(kinds.VM, "e2-micro", "us-east1")
    disk = PriceQuery(kinds.DISK, "pd-balanced", "us-central1", 100.0)
    emea = PriceQuery(kinds.VM, "n2-highcpu-8", "europe-west4")

    answers = catalog.prices([custom, micro, disk, emea])

    assert answers[custom.key].hourly == pytest.approx(4 * 0.033174 + 16 * 0.004446)  # type: ignore[union-attr]
    assert answers[micro.key].hourly == pytest.approx(0.25 * 0.021811 + 0.002923)  # type: ignore[union-attr]
    # Per GiB-hour (the query's quantity is the disk's size), the zonal SKU, not the regional.
    assert answers[disk.key].hourly == pytest.approx(0.1 / 730)  # type: ignore[union-attr]
    assert answers[emea.key].hourly == pytest.approx(8 * 0.034773 + 8 * 0.004661)  # type: ignore[union-attr]
    assert len(billing.requests) == 6  # one listing (six pages) answered all four


def test_the_catalog_is_read_with_the_sweeps_key_file_when_one_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The sweep's identity prices too: a --gcp-key-file sweep does not fall back to ADC.
    import google.auth
    from google.oauth2 import service_account

    ambient = object()  # what application default credentials would have given
    monkeypatch.setattr(google.auth, "default", lambda **_: (ambient, None))

    key = victim_key(tmp_path / "key.json", "https://oauth2.googleapis.com/token")
    catalog = price_list(SweepRequest(settings={"gcp_key_file": str(key)}))
    assert isinstance(catalog, BillingCatalog)

    credentials = catalog._credentials()  # built only: nothing is sent

    assert isinstance(credentials, service_account.Credentials), broken(
        "prices-use-the-sweeps-identity", f"not the key file's identity: {credentials!r}"
    )
    assert credentials.service_account_email.startswith("fleet-auditor@")


def test_a_disk_as_the_live_sweep_spells_it_is_priced_by_type_and_size() -> None:
    disk = Resource(provider="gcp", account="p", region="us-central1", group="", id="d-1",
                    name="d-1", kind=kinds.DISK, size="pd-balanced 100 GiB, attached to nothing",
                    power_state="unknown", created=None)  # fmt: skip

    assert price_query(disk) == PriceQuery(kinds.DISK, "pd-balanced", "us-central1", 100.0)


@pytest.mark.parametrize(
    ("machine_type", "shape"),
    [
        ("n2-standard-4", Shape("n2", 4, 16)),
        ("n1-standard-1", Shape("n1", 1, 3.75)),
        ("n1-highmem-8", Shape("n1", 8, 52)),
        ("n1-highcpu-2", Shape("n1", 2, 1.8)),
        ("n2d-highmem-16", Shape("n2d", 16, 128)),
        ("e2-highcpu-32", Shape("e2", 32, 32)),
        ("c2-standard-30", Shape("c2", 30, 120)),
        ("e2-small", Shape("e2", 0.5, 2)),
        ("N2-Standard-8", Shape("n2", 8, 32)),
        ("custom-2-7680", Shape("n1", 2, 7.5, custom=True)),
        ("n2-custom-4-16384", Shape("n2", 4, 16, custom=True)),
        ("e2-custom-2-8192", Shape("e2", 2, 8, custom=True)),
        # Not known here: unknown, never zero.
        ("n9-standard-4", None),  # a series not in the table
        ("a2-highgpu-1g", None),  # a GPU bundled
        ("f1-micro", None),  # N1's shared core bills per instance
        ("n2-custom-4-40960-ext", None),  # extended memory bills apart
        ("n2-custom-4-40960", None),  # more than N2 holds without extending
        ("n2-custom-4-1000", None),  # not a multiple of 256 MiB
        ("n2-standard-0", None),
        ("", None),
    ],
)
def test_a_machine_types_shape_comes_from_its_name(machine_type: str, shape: Shape | None) -> None:
    assert shape_of(machine_type) == shape

"""Prices from Azure's own list: the Retail Prices API (served by the fake over TLS on
127.0.0.1, in its documented shape), through the dated cache, the bundled table only the
offline fallback."""

from __future__ import annotations

import json
import os
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from azure_helpers import SUB_A
from cloudguard_azure.fake_arm import FakeArm
from cloudguard_azure.fake_arm.retailprices.models import Meter, add_meter
from leaked_run import RUN, LeakedRun, leaked_run
from named_checks import broken
from test_azure_resource_graph import cli, live

RETAIL = "GET retail_prices"
PRICES_API = "Azure Retail Prices API"
TODAY = datetime.now(UTC).date().isoformat()
SOURCE = f"{PRICES_API}, {TODAY}"


@pytest.fixture
def run(arm: FakeArm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LeakedRun:
    monkeypatch.chdir(tmp_path)
    return leaked_run(arm.state, SUB_A)


def audit(arm: FakeArm, *extra: str, retail: bool = True) -> tuple[int, dict[str, Any], str]:
    endpoint = ["--retail-prices-endpoint", arm.base_url] if retail else []
    done = cli(*live(arm), "--subscription", SUB_A, "--leaked-by", f"ci-run={RUN}",
               *endpoint, "--format", "json", *extra)  # fmt: skip
    return done.exit_code, json.loads(done.stdout), done.stderr


def costs(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["resource"]["name"]: f["cost"] for f in report["findings"]}


def cache_file() -> Path:
    return Path(os.environ["XDG_CACHE_HOME"]) / "cloudguard" / "prices" / "azure.json"


def test_a_live_audit_prices_from_the_retail_list_with_its_date(
    arm: FakeArm, run: LeakedRun
) -> None:
    code, report, stderr = audit(arm)

    assert code == 1, stderr
    cost = costs(report)
    # Standard_D4as_v6 in westeurope: the Linux pay-as-you-go meter, not Spot, Windows or
    # a reservation (the bundled table says 0.172, for eastus).
    assert cost["vm-ci-77"]["hourly"] == 0.2016, broken(
        "the-pay-as-you-go-linux-meter", f"priced at another meter: {cost['vm-ci-77']}"
    )
    assert cost["vm-ci-77"]["source"] == SOURCE
    assert cost["vm-ci-77-ip"]["hourly"] == 0.005 and cost["vm-ci-77-ip"]["source"] == SOURCE
    assert cost["aks-ci-77"]["hourly"] == 0.10
    # Its disks, 128 GiB Premium SSD: the P10 tier's monthly meter (not its bursting), / 730.
    assert cost["vm-ci-77-data"]["hourly"] == pytest.approx(21.68 / 730), broken(
        "a-disk-priced-by-its-tier-meter", f"priced at another meter: {cost['vm-ci-77-data']}"
    )
    assert cost["vm-ci-77-data"]["source"] == SOURCE
    assert report["prices"]["sources"] == {SOURCE: 5}  # a VM, an IP, a cluster, two disks
    asked = [line for line in arm.faults.log if "/api/retail/prices" in line]
    assert len(asked) == 4 and arm.faults.requests[RETAIL] == 4  # the disks share one
    assert any("skuName eq 'P10 LRS'" in line for line in asked), asked
    assert all("priceType eq 'Consumption'" in line for line in asked), asked
    assert any("armSkuName eq 'Standard_D4as_v6'" in line for line in asked)


def test_prices_are_kept_in_a_dated_private_cache_and_not_asked_again(
    arm: FakeArm, run: LeakedRun, tmp_path: Path
) -> None:
    audit(arm)
    arm.faults.reset_counts()

    _, again, _ = audit(arm)

    asked = arm.faults.requests[RETAIL]
    assert asked == 0, broken("a-fresh-cache-is-not-asked", f"the list was asked {asked} times")
    assert costs(again)["vm-ci-77"]["source"] == SOURCE
    mode = stat.S_IMODE(cache_file().stat().st_mode)
    assert mode == 0o600, oct(mode)
    entries = json.loads(cache_file().read_text())["entries"]
    assert entries["vm|standard_d4as_v6|westeurope"]["fetched"] == TODAY

    # An audit of files reads the cache, never the network.
    export = tmp_path / "vm.json"
    export.write_text(json.dumps([{
        "id": run.vm.id, "name": run.vm.name, "location": "westeurope",
        "hardwareProfile": {"vmSize": "Standard_D4as_v6"}, "powerState": "VM running",
        "tags": {"ci-run": RUN},
    }]))  # fmt: skip
    arm.faults.reset_counts()
    done = cli("--inventory", str(export), "--leaked-by", f"ci-run={RUN}", "--format", "json")
    (finding,) = json.loads(done.stdout)["findings"]
    assert finding["cost"] == {**finding["cost"], "hourly": 0.2016, "source": SOURCE}
    assert arm.faults.total_requests == 0


def test_a_stale_entry_is_asked_again(arm: FakeArm, run: LeakedRun) -> None:
    audit(arm)
    document = json.loads(cache_file().read_text())
    old = (datetime.now(UTC) - timedelta(days=30)).date().isoformat()
    for entry in document["entries"].values():
        entry["fetched"] = old
    cache_file().write_text(json.dumps(document))
    arm.faults.reset_counts()

    _, report, _ = audit(arm)

    assert arm.faults.requests[RETAIL] == 4
    assert costs(report)["vm-ci-77"]["source"] == SOURCE


def test_the_bundled_table_is_the_offline_fallback_and_says_so(
    arm: FakeArm, run: LeakedRun
) -> None:
    _, report, _ = audit(arm, "--prices", "bundled")

    vm = costs(report)["vm-ci-77"]
    assert (vm["hourly"], vm["source"]) == (0.172, "bundled table 2025-06-01 (offline fallback)")
    # The table carries the common other kinds: a Standard static IP, a disk's tier (P10).
    assert costs(report)["vm-ci-77-ip"]["hourly"] == 0.005
    assert costs(report)["vm-ci-77-data"]["hourly"] == pytest.approx(19.71 / 730)
    assert costs(report)["vm-ci-77-data"]["source"] == "bundled table 2025-06-01 (offline fallback)"
    assert arm.faults.requests[RETAIL] == 0


def test_a_faked_management_endpoint_never_sends_its_questions_to_the_public_list(
    arm: FakeArm, run: LeakedRun
) -> None:
    """No --retail-prices-endpoint with another --management-endpoint: no list is read (the
    public one would be a reach from a test); the bundled table prices what it can. A
    question sent to the public list is refused by the guard this suite runs under, and an
    unreadable list is a warning of the audit's (an answered one would price the VM)."""
    code, report, _ = audit(arm, retail=False)

    tried = [w for w in report["warnings"] if w.startswith(PRICES_API)]
    assert tried == [], broken("no-question-to-the-public-list", f"a list was asked: {tried}")
    assert arm.faults.requests[RETAIL] == 0
    assert costs(report)["vm-ci-77"]["source"] == "bundled table 2025-06-01 (offline fallback)"
    assert code == 1


def test_an_unreachable_list_is_a_warning_not_a_failed_audit(arm: FakeArm, run: LeakedRun) -> None:
    arm.faults.inject(503, match="/api/retail/prices", times=100)

    code, report, stderr = audit(arm, "--retries", "1")

    assert code == 1, stderr  # the audit ran: orphans found, not 75
    assert any("Azure Retail Prices API could not be read" in w for w in report["warnings"])
    assert costs(report)["vm-ci-77"]["source"] == "bundled table 2025-06-01 (offline fallback)"
    assert "could not be read" in stderr


def test_every_next_page_link_is_followed(arm: FakeArm, run: LeakedRun) -> None:
    """150 Windows meters of the size before its Linux one: the price is on page two."""
    linux = next(m for m in arm.state.retail_prices if m.arm_sku_name == "Standard_D4as_v6")
    arm.state.retail_prices.remove(linux)
    windows = "Virtual Machines D Series Windows"
    for n in range(150):
        meter = Meter("Virtual Machines", "westeurope", "EU West", windows, f"D4as v6 {n}",
                      f"D4as v6 {n}", 0.5, arm_sku_name="Standard_D4as_v6")  # fmt: skip
        add_meter(arm.state, meter)
    add_meter(arm.state, linux)

    _, report, _ = audit(arm)

    assert costs(report)["vm-ci-77"]["hourly"] == 0.2016
    pages = [line for line in arm.faults.log if "armSkuName" in line]
    assert len(pages) == 2 and "$skip=100" in pages[1], pages

"""The incident through the live Azure path gives the verdicts the offline `az` path gives.

The same fleet (the demo's: healthy workers with controller records and real
generations, plus vm-fm7c799d-wkr-01) is audited twice by the engine: once
swept live from the fake ARM through the real SDK, once from the
`az vm list --show-details -o json` document of the very same VMs.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from azure_helpers import FAST_RETRY
from cloudguard_azure import demo
from cloudguard_azure.adapter import AzureAdapter
from cloudguard_azure.fake_arm import FakeArm
from cloudguard_azure.fake_arm.compute.models import VirtualMachine
from cloudguard_azure.fake_arm.wire import arm_time

from cloudguard.audit.auditor import run_audit
from cloudguard.audit.cost import bundled_prices
from cloudguard.audit.evidence.interface import EvidenceRequest
from cloudguard.audit.inventories import Inventory
from cloudguard.audit.inventory_files import InventoryFile
from cloudguard.cloud.records import SweepRequest, SweepResult
from cloudguard.documents.findings import AuditPolicy, AuditReport, exit_code

_AZ_POWER = {"running": "VM running", "deallocated": "VM deallocated", "stopped": "VM stopped"}


class LiveAzure:
    def __init__(self, arm: FakeArm) -> None:
        self.request = SweepRequest(
            subscriptions=(demo.SUB_FLEET, demo.SUB_PILOT),
            credential="fake-arm",
            endpoint=arm.base_url,
            ca_bundle=arm.ca_pem,
        )

    def read(self) -> SweepResult:
        return AzureAdapter(retry=FAST_RETRY).sweep(self.request)


def az_show_details(vm: VirtualMachine) -> dict[str, Any]:
    """The fields `az vm list --show-details -o json` prints for a VM."""
    return {
        "id": vm.id,
        "name": vm.name,
        "location": vm.location,
        "resourceGroup": vm.group.upper(),  # az upper-cases it; the id keeps the case
        "hardwareProfile": {"vmSize": vm.size},
        "powerState": _AZ_POWER[vm.power_state],
        "timeCreated": arm_time(vm.time_created),
        "tags": vm.tags,
        "provisioningState": vm.provisioning_state,
    }


@pytest.fixture
def fleet(arm: FakeArm, tmp_path: Path) -> dict[str, Any]:
    now = datetime.now(UTC)
    shas = demo.make_repo(tmp_path / "repo")
    home = demo.make_controller_home(tmp_path / "controller")
    demo.seed_fleet(arm.state, shas, now)
    inventory = tmp_path / "vms.json"
    inventory.write_text(json.dumps([az_show_details(vm) for vm in arm.state.vms.values()]))
    sources = EvidenceRequest(controller_home=str(home), repo=str(tmp_path / "repo"))
    return {"now": now, "sources": sources, "inventory": inventory}


def audit(inventory: Inventory, fleet: dict[str, Any]) -> AuditReport:
    """`--kind vm`: `az vm list` knows VMs only (the live sweep also lists their groups)."""
    policy = AuditPolicy(kinds=("vm",))
    return run_audit([inventory], fleet["sources"], policy, bundled_prices(), fleet["now"])


def verdicts(report: AuditReport) -> dict[str, tuple[str, tuple[str, ...], str]]:
    return {
        f.resource.id.casefold(): (f.verdict, f.reasons, f.resource.power_state)
        for f in report.findings
    }


def test_live_sweep_and_offline_inventory_agree_on_the_incident(
    arm: FakeArm, fleet: dict[str, Any]
) -> None:
    live = audit(LiveAzure(arm), fleet)
    offline = audit(InventoryFile(str(fleet["inventory"])), fleet)

    assert live.failures == () and offline.failures == ()
    assert verdicts(live) == verdicts(offline)
    assert live.resources_seen == offline.resources_seen == 6
    assert live.untagged == offline.untagged == 1
    assert exit_code(live) == exit_code(offline) == 1

    (orphan,) = [f for f in live.findings if f.verdict == "orphan"]
    assert orphan.resource.name == demo.INCIDENT_VM
    assert orphan.resource.size == "Standard_D4as_v6"
    assert orphan.resource.group == "pilot"
    assert orphan.resource.power_state == "running"
    assert set(orphan.reasons) >= {
        "no-controller-record",
        "fixture-task-id",
        "unknown-generation",
    }
    assert orphan.cost.billable and orphan.cost.hourly and orphan.cost.accrued
    assert {f.verdict for f in live.findings if f is not orphan} == {"ok"}


def test_a_forbidden_subscription_makes_the_audit_did_not_run(
    arm: FakeArm, fleet: dict[str, Any]
) -> None:
    arm.faults.forbid(demo.SUB_FLEET)
    report = audit(LiveAzure(arm), fleet)
    (failure,) = report.failures
    assert demo.SUB_FLEET in failure.source and "403" in failure.reason
    assert exit_code(report) == 75  # never 0, even with the pilot orphan found
    assert [f.resource.name for f in report.findings if f.verdict == "orphan"] == [demo.INCIDENT_VM]

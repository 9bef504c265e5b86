"""Terraform state as evidence on the live Azure path: the real SDK's ids match state's.

The demo's fleet is swept live from the fake ARM through azure-mgmt-compute
with a controller home that has no records at all: the workers Terraform
state owns are `ok` (owned-by-terraform-state), and the incident VM, which no
state owns, is still the orphan.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cloudguard_azure import demo
from cloudguard_azure.fake_arm import FakeArm
from named_checks import broken
from test_azure_incident import LiveAzure

from cloudguard.audit.auditor import run_audit
from cloudguard.audit.cost import bundled_prices
from cloudguard.audit.evidence.interface import EvidenceRequest
from cloudguard.documents.findings import AuditPolicy, exit_code


def configured(vm: Any) -> str:
    """The VM's id as state keeps it: the resource group as the configuration spelled it
    (upper case here), which ARM compares case-insensitively, and so does the audit."""
    marker = f"/resourceGroups/{vm.group}/"
    assert marker in vm.id
    return vm.id.replace(marker, marker.upper().replace("RESOURCEGROUPS", "resourceGroups"))


def show_json(vms: list[Any]) -> dict[str, Any]:
    """`terraform show -json` of a configuration that created `vms` (one module)."""
    return {
        "format_version": "1.0",
        "terraform_version": "1.9.8",
        "values": {
            "root_module": {
                "child_modules": [
                    {
                        "address": "module.workers",
                        "resources": [
                            {
                                "address": f"module.workers.azurerm_linux_virtual_machine.w[{i}]",
                                "mode": "managed",
                                "type": "azurerm_linux_virtual_machine",
                                "name": "w",
                                "index": i,
                                "provider_name": "registry.terraform.io/hashicorp/azurerm",
                                "schema_version": 0,
                                "values": {"id": configured(vm), "name": vm.name},
                                "sensitive_values": {},
                            }
                            for i, vm in enumerate(vms)
                        ],
                    }
                ]
            }
        },
    }


def test_workers_terraform_owns_are_ok_without_records_and_the_incident_stays_an_orphan(
    arm: FakeArm, tmp_path: Path
) -> None:
    now = datetime.now(UTC)
    demo.seed_fleet(arm.state, demo.make_repo(tmp_path / "repo"), now)
    (tmp_path / "controller" / "state").mkdir(parents=True)  # a controller that knows nothing
    workers = [vm for vm in arm.state.vms.values() if "-wkr-" in vm.name]
    owned = [vm for vm in workers if vm.name != demo.INCIDENT_VM]
    state = tmp_path / "show.json"
    state.write_text(json.dumps(show_json(owned)))

    sources = EvidenceRequest(
        controller_home=str(tmp_path / "controller"), terraform_state=(str(state),)
    )
    report = run_audit([LiveAzure(arm)], sources, AuditPolicy(), bundled_prices(), now)

    assert report.failures == ()
    verdicts = {f.resource.name: (f.verdict, f.reasons) for f in report.findings}
    assert len(owned) == 4
    for vm in owned:
        assert verdicts[vm.name] == ("ok", ("owned-by-terraform-state",)), broken(
            "an-owned-vm-is-ok",
            f"{vm.name} is {verdicts[vm.name]} although Terraform state owns {vm.id}",
        )
    incident, reasons = verdicts[demo.INCIDENT_VM]
    assert incident == "orphan" and reasons[0] == "no-controller-record"
    assert exit_code(report) == 1

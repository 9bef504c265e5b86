"""Owned-id evidence at fleet scale: reading Terraform state, and what ownership adds to classify.

Reads a 20,000-VM state file and its `terraform show -json` twin (written
here in the shapes Terraform writes), then classifies 100,000 resources
without owned ids and with 50,000 of them owned, side by side in one run
(best of a few repeats; machines here are noisy). Prints a markdown table and
writes benchmarks/results/audit_owned_ids.json.
"""

from __future__ import annotations

import json
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_audit_classify import NOW, fleet

from cloudguard.audit.classify import classify
from cloudguard.audit.cost import bundled_prices
from cloudguard.audit.evidence.interface import Evidence, cloud_id_key
from cloudguard.audit.evidence.terraform_state import read_terraform_state
from cloudguard.documents.findings import AuditPolicy

VMS_IN_STATE = 20_000
RESOURCES = 100_000
OWNED = 50_000
REPEATS = 3
RESULTS = Path(__file__).resolve().parent / "results" / "audit_owned_ids.json"
ARM = "/subscriptions/s/resourceGroups/pilot/providers/Microsoft.Compute/virtualMachines"


def vm_attributes(i: int) -> dict[str, object]:
    return {
        "admin_password": "not-a-real-secret",
        "admin_username": "fleet",
        "computer_name": f"vm-{i}",
        "id": f"{ARM}/vm-{i}",
        "location": "eastus",
        "name": f"vm-{i}",
        "network_interface_ids": [f"{ARM}/../networkInterfaces/nic-{i}"],
        "os_disk": [{"caching": "ReadWrite", "disk_size_gb": 30, "name": f"osdisk-{i}"}],
        "resource_group_name": "pilot",
        "size": "Standard_D4as_v6",
        "tags": {"task-id": f"task-{i}", "repository-generation": f"{i:040x}"},
        "virtual_machine_id": f"{i:08x}-0000-0000-0000-000000000000",
    }


def state_file() -> dict[str, object]:
    instances = [
        {
            "index_key": i,
            "schema_version": 0,
            "attributes": vm_attributes(i),
            "sensitive_attributes": [[{"type": "get_attr", "value": "admin_password"}]],
            "private": "eyJzY2hlbWFfdmVyc2lvbiI6IjAifQ==",
        }
        for i in range(VMS_IN_STATE)
    ]
    resource = {
        "mode": "managed",
        "type": "azurerm_linux_virtual_machine",
        "name": "worker",
        "provider": 'provider["registry.terraform.io/hashicorp/azurerm"]',
        "instances": instances,
    }
    return {"version": 4, "terraform_version": "1.9.8", "serial": 1, "resources": [resource]}


def show_json() -> dict[str, object]:
    resources = [
        {
            "address": f"azurerm_linux_virtual_machine.worker[{i}]",
            "mode": "managed",
            "type": "azurerm_linux_virtual_machine",
            "name": "worker",
            "index": i,
            "values": vm_attributes(i),
            "sensitive_values": {"admin_password": True},
        }
        for i in range(VMS_IN_STATE)
    ]
    return {"format_version": "1.0", "values": {"root_module": {"resources": resources}}}


def best(fn: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    rows: list[tuple[str, float, int]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, document in (("state file (v4)", state_file()), ("show -json", show_json())):
            path = Path(tmp, "state.json")
            path.write_text(json.dumps(document))
            assert len(read_terraform_state(path)) == VMS_IN_STATE
            size_mb = path.stat().st_size / 1e6
            rows.append(
                (
                    f"read {label}, {size_mb:.1f} MB",
                    best(lambda path=path: read_terraform_state(path)),
                    VMS_IN_STATE,
                )
            )

    resources = fleet(RESOURCES)
    policy, prices = AuditPolicy(), bundled_prices()
    owned = frozenset(cloud_id_key(r.id) for r in resources[:OWNED])
    without = Evidence(controller_tasks=frozenset())
    with_owned = Evidence(controller_tasks=frozenset(), owned_ids=(("terraform-state", owned),))
    for label, evidence in (
        ("classify, no owned ids", without),
        (f"classify, {OWNED:,} owned ids", with_owned),
    ):
        rows.append(
            (
                label,
                best(lambda ev=evidence: [classify(r, ev, policy, prices, NOW) for r in resources]),
                RESOURCES,
            )
        )

    print(f"best of {REPEATS}\n")
    print("| what | seconds | items/s |")
    print("|---|---:|---:|")
    for label, seconds, count in rows:
        print(f"| {label} | {seconds:.3f} | {count / seconds:,.0f} |")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "audit_owned_ids",
                "repeats": REPEATS,
                "python": sys.version.split()[0],
                "machine": platform.machine(),
                "results": [{"what": w, "seconds": s, "items": n} for w, s, n in rows],
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

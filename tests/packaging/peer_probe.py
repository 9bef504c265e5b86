"""Run by a peer environment's Python (test_peer_install.py), never imported by the suite.

The Azure adapter, installed beside a suite's older azure-mgmt-* pins, does
against the fake ARM what reads the packages that overwrote those pins did:
lists the subscriptions a credential sees (--all-subscriptions), sweeps with
both engines (Resource Graph through azure-mgmt-resourcegraph), and reads a
VM's protection (its group's and subscription's tags, and the management
locks at three scopes). Prints one JSON line of what it saw.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from cloudguard_azure.adapter import AzureAdapter, RetrySettings
from cloudguard_azure.fake_arm import serve
from cloudguard_azure.fake_arm.authorization.models import add_lock
from cloudguard_azure.fake_arm.compute.models import add_vm

from cloudguard.cloud.records import SweepRequest
from cloudguard.documents.plan import PlanItem

SUBSCRIPTIONS = ("0b1f6471-1bf0-4dda-aec3-111111111111", "0b1f6471-1bf0-4dda-aec3-222222222222")


def main() -> None:
    with serve() as arm:
        for index, sub in enumerate(SUBSCRIPTIONS):
            arm.state.add_subscription(sub, f"sub-{index}")
            add_vm(arm.state, sub, "pilot", f"vm-{index}", tags={"task-id": f"t-{index}"})
        vm = add_vm(arm.state, SUBSCRIPTIONS[0], "pilot", "vm-locked", tags={"task-id": "t"})
        add_lock(arm.state, f"/subscriptions/{SUBSCRIPTIONS[0]}/resourceGroups/pilot", "keep")
        adapter = AzureAdapter(retry=RetrySettings(total=2, backoff_factor=0.01))
        swept = {}
        for engine in ("arm", "resource-graph"):
            request = SweepRequest(
                all_subscriptions=True,
                credential="fake-arm",
                endpoint=arm.base_url,
                ca_bundle=arm.ca_pem,
                settings={"engine": engine},
            )
            result = adapter.sweep(request)
            swept[engine] = {
                "vms": sorted(r.name for r in result.resources if r.kind == "vm"),
                "failures": [f"{f.source}: {f.reason}" for f in result.failures],
            }
        reaper = adapter.reaper(request)
        try:
            item = PlanItem(
                provider="azure", account=SUBSCRIPTIONS[0], region="", group="pilot", id=vm.id,
                name=vm.name, kind="vm", action="deallocate", tags={"task-id": "t"},
                verdict="orphan", reasons=(), power_state="running",
                audited_at=datetime.now(UTC),
            )  # fmt: skip
            live = reaper.current(item)
        finally:
            reaper.close()
        print(json.dumps({"swept": swept, "protections": list(live.protections) if live else None}))


if __name__ == "__main__":
    main()

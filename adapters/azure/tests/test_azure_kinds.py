"""Every kind a run can leak, through both engines: azure-mgmt-resource's `resources.list`
and `resourceGroups.list` (ARM) and azure-mgmt-resourcegraph's union of
`resourcecontainers` and `resources`, against the fake ARM over TLS on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from azure_helpers import SUB_A, SUB_B, adapter, request_for
from cloudguard_azure.fake_arm import FakeArm
from leaked_run import RUN, LeakedRun, leaked_run
from test_azure_resource_graph import GRAPH, cli, live

KINDS = {
    "rg-ci-run-77": "resource-group",
    "vm-ci-77": "vm",
    "vm-ci-77-osdisk": "disk",
    "vm-ci-77-data": "disk",
    "vm-ci-77-nic": "nic",
    "vm-ci-77-ip": "public-ip",
    "stci77leaked": "storage-account",
    "aks-ci-77": "kubernetes-cluster",
}


@pytest.fixture
def run(arm: FakeArm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LeakedRun:
    monkeypatch.chdir(tmp_path)  # no cloudguard.toml of the repository applies
    arm.state.add_vm(SUB_A, "workers", "vm-healthy", tags={"task-id": "task-0042"})
    return leaked_run(arm.state, SUB_A)


def audit(arm: FakeArm, *extra: str) -> tuple[int, dict[str, Any]]:
    done = cli(*live(arm), "--subscription", SUB_A, "--leaked-by", f"ci-run={RUN}",
               "--format", "json", *extra)  # fmt: skip
    return done.exit_code, json.loads(done.stdout)


@pytest.mark.parametrize("engine", ["arm", "resource-graph"])
def test_leaked_by_finds_everything_the_run_left_whole(
    arm: FakeArm, run: LeakedRun, engine: str
) -> None:
    code, report = audit(arm, "--engine", engine)

    leaked = {f["resource"]["name"]: f for f in report["findings"] if f["verdict"] == "leaked"}
    assert set(leaked) == run.names, f"{engine} missed {run.names - set(leaked)}"
    assert {name: f["resource"]["kind"] for name, f in leaked.items()} == KINDS
    assert code == 1
    # The healthy VM's group and VM are resources too, not the run's.
    assert report["summary"]["resources"] == len(run.names) + 2


def test_both_engines_read_every_kind_alike(arm: FakeArm, run: LeakedRun) -> None:
    _, by_arm = audit(arm, "--engine", "arm")
    _, by_graph = audit(arm, "--engine", "resource-graph")

    def resources(report: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
        return {
            f["resource"]["name"]: tuple(
                f["resource"][k] for k in ("kind", "account", "group", "region", "tags", "size")
            )
            for f in report["findings"]
        }

    assert resources(by_graph) == resources(by_arm)


def test_the_arm_engine_costs_one_listing_per_source_and_subscription(
    arm: FakeArm, run: LeakedRun
) -> None:
    arm.state.add_subscription(SUB_B)
    result = adapter().sweep(request_for(arm, kinds=(), subscriptions=(SUB_A, SUB_B)))

    assert result.failures == ()
    assert arm.faults.requests == {
        "GET vm_list_all": 2,
        "GET disk_list": 2,
        "GET resources_list": 2,
        "GET resource_groups_list": 2,
    }
    listed = [line for line in arm.faults.log if "/resources?" in line]
    assert all("$expand=createdTime,changedTime" in line for line in listed), listed
    found = {r.name: r for r in result.resources}
    # ARM's createdTime is the identity of a resource with no unique id in its listing.
    assert found["stci77leaked"].created == run.storage.created
    assert found["vm-ci-77"].uid == run.vm.vm_id  # VMs and disks keep their own listings


def test_a_resource_graph_sweep_of_every_kind_costs_one_query_per_1000_rows(
    arm: FakeArm, run: LeakedRun
) -> None:
    arm.faults.graph.page_size = 4
    result = adapter().sweep(request_for(arm, kinds=(), engine="resource-graph"))

    # 1 subscription + 2 groups + 8 resources (the healthy VM among them) = 11 rows, 4 a page.
    assert result.failures == () and len(result.resources) == 10
    assert arm.faults.requests == {GRAPH: 3}
    found = {r.name: r for r in result.resources}
    assert found["vm-ci-77-ip"].uid == run.public_ip.resource_guid


@pytest.mark.parametrize(
    ("kinds", "names", "listings"),
    [
        (["public-ip", "storage-account"], {"vm-ci-77-ip", "stci77leaked"}, {"resources_list"}),
        (["vm"], {"vm-ci-77", "vm-healthy"}, {"vm_list_all"}),
        (["resource-group"], {"rg-ci-run-77"}, {"resource_groups_list"}),
        (["microsoft.containerservice/managedclusters"], set(), {"resources_list"}),
    ],
)
def test_kind_narrows_the_audit_and_the_listings(
    arm: FakeArm, run: LeakedRun, kinds: list[str], names: set[str], listings: set[str]
) -> None:
    code, report = audit(arm, "--engine", "arm", *(a for k in kinds for a in ("--kind", k)))

    assert {f["resource"]["name"] for f in report["findings"]} == names
    assert {key.split(" ", 1)[1] for key in arm.faults.requests} == listings
    assert report["policy"]["kinds"] == kinds
    assert code == (1 if names else 0)


def test_billing_is_known_per_kind_and_the_headline_counts_what_is_unpriced(
    arm: FakeArm, run: LeakedRun
) -> None:
    _, report = audit(arm, "--engine", "arm")
    found = {f["resource"]["name"]: f for f in report["findings"]}

    assert found["vm-ci-77-nic"]["billable"] is False  # a NIC bills nothing by itself
    assert found["rg-ci-run-77"]["billable"] is False
    for name in ("vm-ci-77-osdisk", "vm-ci-77-ip", "stci77leaked", "aks-ci-77"):
        assert found[name]["billable"] is True, f"{name}: {found[name]['cost']}"
    table = cli(*live(arm), "--subscription", SUB_A, "--leaked-by", f"ci-run={RUN}")
    unpriced = report["summary"]["unpriced_billable"]
    assert unpriced >= 1
    assert f"({unpriced} of them unpriced, not in those sums)" in table.stdout.splitlines()[0]

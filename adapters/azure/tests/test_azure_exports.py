"""Offline, every kind: `az resource list -o json` and `az graph query -o json` exports.

Each export is what the real SDK reads from the fake ARM (azure-mgmt-resource's
`resources.list` with `$expand=createdTime,changedTime`; azure-mgmt-resourcegraph's
query), written as az prints it, then audited from the file alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from azure.mgmt.resource.resources import ResourceManagementClient
from azure.mgmt.resourcegraph import ResourceGraphClient
from azure.mgmt.resourcegraph.models import QueryRequest, QueryRequestOptions
from azure_helpers import SUB_A, sdk_options
from cloudguard_azure.fake_arm import FakeArm
from cloudguard_azure.resource_graph import EVERYTHING_QUERY
from leaked_run import RUN, LeakedRun, leaked_run
from test_azure_kinds import KINDS
from test_azure_resource_graph import cli


@pytest.fixture
def run(arm: FakeArm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LeakedRun:
    monkeypatch.chdir(tmp_path)
    return leaked_run(arm.state, SUB_A)


def az_resource_list(arm: FakeArm) -> list[dict[str, Any]]:
    """`az resource list -o json`: the REST items of resources.list, plus `az group list`'s."""
    with ResourceManagementClient(arm.credential(), SUB_A, **sdk_options(arm)) as client:
        items = [r.as_dict() for r in client.resources.list(expand="createdTime,changedTime")]
        groups = [g.as_dict() for g in client.resource_groups.list()]
    return [*items, *groups]


def az_graph_query(arm: FakeArm) -> dict[str, Any]:
    with ResourceGraphClient(arm.credential(), **sdk_options(arm)) as client:
        answer = client.resources(
            QueryRequest(
                subscriptions=[SUB_A],
                query=EVERYTHING_QUERY,
                options=QueryRequestOptions(result_format="objectArray"),
            )
        )
    data = list(answer.data)
    return {"count": len(data), "data": data, "skip_token": None, "total_records": len(data)}


def audit_file(path: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    done = cli("--inventory", str(path), "--leaked-by", f"ci-run={RUN}", "--format", "json", *extra)
    return done.exit_code, json.loads(done.stdout) if done.stdout else {}, done.stderr


@pytest.mark.parametrize("export", ["az resource list", "az graph query"])
def test_an_export_of_every_kind_finds_the_leaked_run_whole(
    arm: FakeArm, run: LeakedRun, tmp_path: Path, export: str
) -> None:
    document = az_resource_list(arm) if export == "az resource list" else az_graph_query(arm)
    path = tmp_path / "export.json"
    path.write_text(json.dumps(document))

    code, report, stderr = audit_file(path)

    assert code == 1, stderr
    leaked = {f["resource"]["name"]: f["resource"] for f in report["findings"]}
    assert {name: r["kind"] for name, r in leaked.items()} == KINDS, f"{export} missed some"
    assert {r["account"] for r in leaked.values()} == {SUB_A}
    assert leaked["stci77leaked"]["group"] == run.group
    if export == "az resource list":  # ARM's createdTime is in the listing
        assert leaked["stci77leaked"]["created"] is not None


def test_a_graph_page_with_more_to_come_is_refused_not_read_as_everything(
    arm: FakeArm, run: LeakedRun, tmp_path: Path
) -> None:
    page = {**az_graph_query(arm), "skip_token": "ew0KICAiJGlkIjogIjEiLA0K"}
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page))

    code, _, stderr = audit_file(path)

    assert code == 75, stderr
    assert "skip_token is set" in stderr


def test_az_vm_list_entries_are_still_read_as_vms(tmp_path: Path, arm: FakeArm) -> None:
    """The claims never overlap: an az VM object keeps its power state and size."""
    entry = {
        "id": f"/subscriptions/{SUB_A}/resourceGroups/pilot/providers/Microsoft.Compute/"
        "virtualMachines/vm-1",
        "name": "vm-1",
        "type": "Microsoft.Compute/virtualMachines",
        "location": "westeurope",
        "hardwareProfile": {"vmSize": "Standard_B2s"},
        "powerState": "VM running",
        "tags": {"ci-run": RUN},
    }
    path = tmp_path / "vms.json"
    path.write_text(json.dumps([entry]))

    _, report, _ = audit_file(path)

    (finding,) = report["findings"]
    assert (finding["resource"]["size"], finding["resource"]["power_state"]) == (
        "Standard_B2s",
        "running",
    )

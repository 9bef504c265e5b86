"""gcloud's two exports read as GCP resources, told apart by shape from every other cloud's."""

from __future__ import annotations

import json
from pathlib import Path

from cloudguard_gcp.export import AssetSearchExport, InstancesListExport
from cloudguard_gcp.labels import label_key, label_value
from gcp_helpers import PROJECT, ZONE, asset, cli, controller_home, instance
from named_checks import broken

from cloudguard.audit.inventory_files import InventoryFile

VM_PATH = f"projects/{PROJECT}/zones/{ZONE}/instances/vm-7"
VM_NAME = f"//compute.googleapis.com/{VM_PATH}"

KINDS = {
    "compute.googleapis.com/Instance": (VM_PATH, "vm"),
    "compute.googleapis.com/Disk": (f"projects/{PROJECT}/zones/{ZONE}/disks/d-7", "disk"),
    "compute.googleapis.com/Snapshot": (f"projects/{PROJECT}/global/snapshots/s-7", "snapshot"),
    "compute.googleapis.com/Address": (
        f"projects/{PROJECT}/regions/europe-west4/addresses/ip-7",
        "public-ip",
    ),
    "storage.googleapis.com/Bucket": ("bucket-7", "bucket"),
    "container.googleapis.com/Cluster": (
        f"projects/{PROJECT}/locations/europe-west4/clusters/gke-7",
        "kubernetes-cluster",
    ),
    "sqladmin.googleapis.com/Instance": (f"projects/{PROJECT}/instances/sql-7", "database"),
    "pubsub.googleapis.com/Topic": (
        f"projects/{PROJECT}/topics/t-7",
        "pubsub.googleapis.com/topic",
    ),
}
SERVICE = {
    "storage.googleapis.com/Bucket": "storage.googleapis.com",
    "container.googleapis.com/Cluster": "container.googleapis.com",
    "sqladmin.googleapis.com/Instance": "sqladmin.googleapis.com",
    "pubsub.googleapis.com/Topic": "pubsub.googleapis.com",
}


def read(path: Path, document: object) -> list:
    path.write_text(json.dumps(document))
    inventory = InventoryFile(str(path)).read()
    assert inventory.failures == ()
    return list(inventory.resources)


def test_each_asset_type_is_its_kind_and_the_rest_their_asset_type(tmp_path: Path) -> None:
    results = [
        asset(t, path, service=SERVICE.get(t, "compute.googleapis.com"), state="RUNNING")
        for t, (path, _) in KINDS.items()
    ]
    found = {r.id: r for r in read(tmp_path / "assets.json", results)}
    for asset_type, (path, kind) in KINDS.items():
        name = f"//{SERVICE.get(asset_type, 'compute.googleapis.com')}/{path}"
        assert found[name].kind == kind, broken(
            "asset-type-is-its-kind", f"{asset_type} read as {found[name].kind!r}, not {kind}"
        )
        assert found[name].provider == "gcp"
    vm = found[VM_NAME]
    assert (vm.account, vm.region, vm.name, vm.power_state) == (
        PROJECT,
        "europe-west4",
        "vm-7",
        "running",
    )
    assert found["//storage.googleapis.com/bucket-7"].account == "418512345678"  # no id in it


def test_instance_status_decides_the_power_state_both_ways(tmp_path: Path) -> None:
    listed = read(
        tmp_path / "instances.json",
        [instance("vm-on"), instance("vm-off", status="TERMINATED")],
    )
    searched = read(
        tmp_path / "assets.json",
        [
            asset("compute.googleapis.com/Instance", VM_PATH.replace("vm-7", n), state=s)
            for n, s in (("vm-on", "RUNNING"), ("vm-off", "TERMINATED"))
        ],
    )
    for resources in (listed, searched):
        power = {r.name: r.power_state for r in resources}
        assert power == {"vm-on": "running", "vm-off": "stopped"}, broken(
            "status-decides-power", f"RUNNING/TERMINATED read as {power}"
        )
    # Both exports name the same VM the same way: the live and offline paths cannot disagree.
    assert {r.id for r in listed} == {r.id for r in searched}


def test_a_compute_instance_is_told_apart_from_an_az_vm_entry(tmp_path: Path) -> None:
    path = tmp_path / "instances.json"
    path.write_text(json.dumps([instance("vm-7", labels={"task-id": "t"})]))
    inventory = InventoryFile(str(path)).read()
    assert inventory.failures == (), broken(
        "instance-told-apart-by-shape", f"a compute#instance was not read: {inventory.failures}"
    )
    (vm,) = inventory.resources
    assert vm.provider == "gcp", broken(
        "instance-told-apart-by-shape", f"a compute#instance was read by {vm.provider}"
    )
    assert (vm.id, vm.size, vm.region, vm.account) == (
        VM_NAME,
        "n2-standard-4",
        "europe-west4",
        PROJECT,
    )
    assert vm.uid == "7312294612745210001"
    assert vm.tags == {"task-id": "t"}  # the labels, not the network tags
    assert vm.created is not None and vm.created.utcoffset().total_seconds() == 0


def test_shapes_claimed_by_neither_parser() -> None:
    search, listing = AssetSearchExport(), InstancesListExport()
    azure_vm = {"id": "/subscriptions/s/resourceGroups/g/providers/x/vm", "name": "vm"}
    ec2 = {"InstanceId": "i-1"}
    for entry in (azure_vm, ec2, {"name": "x"}):
        assert not search.claims_entry(entry) and not listing.claims_entry(entry), broken(
            "other-shapes-not-claimed", f"a GCP parser claimed {entry}"
        )
    assert not listing.claims_entry(asset("compute.googleapis.com/Instance", VM_PATH))


def test_labels_that_are_not_an_object_of_text_are_refused(tmp_path: Path) -> None:
    bad = instance("vm-7")
    bad["labels"] = [{"key": "task-id", "value": "t"}]
    path = tmp_path / "instances.json"
    path.write_text(json.dumps([bad]))
    inventory = InventoryFile(str(path)).read()
    assert inventory.failures and "labels" in inventory.failures[0].reason


def test_fleet_tag_names_as_label_keys_and_values() -> None:
    assert label_key("task-id") == "task-id"  # the defaults are valid keys as they are
    assert label_key("repository-generation") == "repository-generation"
    assert label_key("Fleet.Task ID") == "fleet_task_id", broken(
        "tag-name-as-label-key", f"Fleet.Task ID -> {label_key('Fleet.Task ID')!r}"
    )
    assert label_key("1st") == "x1st"
    assert label_value("Cloud-NoEnv-C7") == "cloud-noenv-c7"
    assert len(label_value("a" * 100)) == 63


def test_a_task_tag_configured_in_capitals_finds_the_lower_case_label(tmp_path: Path) -> None:
    """Label keys are lower case by definition: `--task-tag Task-Id` names `task-id`."""
    path = tmp_path / "instances.json"
    path.write_text(json.dumps([instance("vm-7", labels={"task-id": "task-0042"})]))
    home = controller_home(tmp_path / "home", meta=("task-0042",))
    done = cli(
        "--inventory", str(path), "--controller-home", str(home),
        "--task-tag", "Task-Id", "--format", "json",
    )  # fmt: skip
    summary = json.loads(done.stdout)["summary"]
    assert summary["untagged"] == 0 and summary["by_verdict"]["ok"] == 1, broken(
        "capitals-find-the-label", f"a Task-Id task tag left the VM unlabelled: {summary}"
    )


def test_a_tag_name_no_label_can_hold_finds_the_label_a_fleet_writes(tmp_path: Path) -> None:
    """`--task-tag fleet.task` and `--leaked-by CI.Run=...`: a label cannot hold `.` or
    capitals, so a fleet labels `fleet_task` and `ci_run` (label_key). Read as given, the
    names would match no label, and the fleet's VMs would be no one's: nothing said."""
    path = tmp_path / "instances.json"
    path.write_text(json.dumps([
        instance("vm-known", labels={"fleet_task": "task-0042"}),
        instance("vm-leaked", labels={"fleet_task": "cloud-noenv-c7", "ci_run": "77"}),
    ]))  # fmt: skip
    home = controller_home(tmp_path / "home", meta=("task-0042",))
    done = cli(
        "--inventory", str(path), "--controller-home", str(home), "--grace", "0s",
        "--task-tag", "fleet.task", "--leaked-by", "CI.Run=77", "--format", "json",
    )  # fmt: skip
    verdicts = {f["resource"]["name"]: f["verdict"] for f in json.loads(done.stdout)["findings"]}
    assert verdicts == {"vm-known": "ok", "vm-leaked": "leaked"}, broken(
        "tag-name-read-as-its-label", f"verdicts {verdicts}: {done.stderr}"
    )

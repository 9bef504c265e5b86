"""`cloudguard reap` on Google Cloud, through the CLI: audit the fake live, plan from its JSON,
apply through the adapter's own reaper (the real google-cloud-compute clients over HTTPS on
127.0.0.1). Each item is bound to its numeric id; every change since the plan is a skip, every
refusal of Compute's a failure that did nothing, and a second apply of one plan acts on nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_gcp import Address, Disk, Instance, serve
from gcp_reaping import (
    PROJECT,
    REGION,
    ZONE,
    Fleet,
    events,
    make_fleet,
    skip_codes,
    vm_id,
)
from named_checks import broken

ORPHAN_TASK = "cloud-noenv-c7"


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Fleet]:
    with serve() as gcp:
        yield make_fleet(gcp, tmp_path, monkeypatch)


def planned(plan: Path) -> list[dict[str, object]]:
    return list(json.loads(plan.read_text())["items"])


def test_the_orphan_is_stopped_by_default_bound_to_its_id_and_the_healthy_vm_runs_on(
    fleet: Fleet,
) -> None:
    orphan = fleet.instance("vm-orphan")
    assert orphan is not None
    plan = fleet.plan()
    (item,) = planned(plan)
    assert (item["id"], item["action"], item["uid"]) == (vm_id("vm-orphan"), "stop", orphan.id)

    code, out, records = fleet.apply(plan, "--yes")

    assert code == 0, out
    assert events(records) == ["start", "intent", "done", "end"], records
    assert fleet.gcp.actions == [("stop", "instance", "vm-orphan", orphan.id)]
    # The stop was sent by id, and its Operation waited for through the fake's endpoint.
    assert fleet.gcp.counts["instances.stop"] == 1
    assert fleet.gcp.counts["zoneOperations.wait"] >= 1, broken(
        "operation-waited", f"requests {dict(fleet.gcp.counts)}"
    )
    assert orphan.status == "TERMINATED"
    healthy = fleet.instance("vm-healthy")
    assert healthy is not None and healthy.status == "RUNNING"


def test_a_dry_run_acts_on_nothing(fleet: Fleet) -> None:
    code, out, records = fleet.apply(fleet.plan())

    assert fleet.gcp.actions == [], broken("a-dry-run-acts-on-nothing", f"{fleet.gcp.actions}")
    assert events(records) == ["start", "would-act", "end"]
    assert code == 0, out


def test_action_delete_deletes_the_instance_and_names_the_disk_it_leaves_billing(
    fleet: Fleet,
) -> None:
    orphan = fleet.instance("vm-orphan")
    assert orphan is not None
    orphan.kept_disks = ["vm-orphan-data"]
    fleet.gcp.world.disks += [
        Disk(PROJECT, ZONE, "vm-orphan", users=["vm-orphan"]),
        Disk(PROJECT, ZONE, "vm-orphan-data", users=["vm-orphan"], size_gb=500),
    ]
    plan = fleet.plan("--action", "delete")
    assert [i["action"] for i in planned(plan) if i["kind"] == "vm"] == ["delete"]

    code, out, records = fleet.apply(plan, "--yes")

    assert code == 0, out
    assert fleet.instance("vm-orphan") is None
    assert fleet.instance("vm-healthy") is not None
    (done,) = [e for e in records if e["event"] == "done"]
    assert "persistent disk vm-orphan-data (autoDelete off)" in done["left_billing"], broken(
        "kept-disk-named", f"left billing: {done['left_billing']}"
    )
    # The boot disk went with its instance; the data disk is left, now attached to nothing.
    assert [d.name for d in fleet.gcp.world.disks] == ["vm-orphan-data"]


def test_an_instance_re_created_under_its_name_since_the_plan_is_never_acted_on(
    fleet: Fleet,
) -> None:
    plan = fleet.plan("--action", "delete")
    orphan = fleet.instance("vm-orphan")
    assert orphan is not None
    fleet.gcp.world.instances.remove(orphan)  # deleted, and a new one made under its name
    fleet.gcp.world.instances.append(
        Instance(PROJECT, ZONE, "vm-orphan", labels={"task-id": ORPHAN_TASK})
    )

    code, out, records = fleet.apply(plan, "--yes")

    assert fleet.gcp.actions == [], broken(
        "bound-to-the-reviewed-id", f"the new instance was acted on: {fleet.gcp.actions}"
    )
    assert skip_codes(records) in (["gone"], ["not-the-planned-resource"]), records
    assert code == 0, out


def test_an_instance_re_created_between_the_read_and_the_delete_is_not_deleted(
    fleet: Fleet,
) -> None:
    """The window no read can close: the delete names the reviewed id, which the new
    instance does not have (Compute answers 404); a delete by name would delete it."""
    plan = fleet.plan("--action", "delete")
    orphan = fleet.instance("vm-orphan")
    assert orphan is not None
    newcomer = Instance(PROJECT, ZONE, "vm-orphan", labels={"task-id": ORPHAN_TASK})

    def re_create_before_the_delete(operation: str) -> None:
        if operation == "instances.delete" and orphan in fleet.gcp.world.instances:
            fleet.gcp.world.instances.remove(orphan)
            fleet.gcp.world.instances.append(newcomer)

    fleet.gcp.before = re_create_before_the_delete
    code, out, records = fleet.apply(plan, "--yes")

    assert fleet.gcp.actions == [], broken(
        "bound-to-the-reviewed-id", f"the new instance was acted on: {fleet.gcp.actions}"
    )
    assert newcomer in fleet.gcp.world.instances
    (failed,) = [e for e in records if e["event"] == "failed"]
    assert "HTTP 404" in failed["detail"], failed
    assert code == 1, out


@pytest.mark.parametrize("label", ["do-not-reap", "cloudguard-protect"])
def test_a_protection_label_added_after_the_plan_skips_the_instance(
    fleet: Fleet, label: str
) -> None:
    plan = fleet.plan("--action", "delete")
    orphan = fleet.instance("vm-orphan")
    assert orphan is not None
    orphan.labels[label] = ""

    code, out, records = fleet.apply(plan, "--yes")

    assert fleet.gcp.actions == [], broken("labels-re-read", f"acted on: {fleet.gcp.actions}")
    assert skip_codes(records) == ["protected"], records
    assert code == 0, out


def test_a_task_label_changed_after_the_plan_is_a_skip(fleet: Fleet) -> None:
    plan = fleet.plan()
    orphan = fleet.instance("vm-orphan")
    assert orphan is not None
    orphan.labels["task-id"] = "task-0042"  # a controller's task now

    code, out, records = fleet.apply(plan, "--yes")

    assert fleet.gcp.actions == [], broken("labels-re-read", f"acted on: {fleet.gcp.actions}")
    assert "task-tag-changed" in skip_codes(records), records
    assert code == 0, out


def test_deletion_protection_is_protection_before_compute_would_refuse(fleet: Fleet) -> None:
    plan = fleet.plan("--action", "delete")
    orphan = fleet.instance("vm-orphan")
    assert orphan is not None
    orphan.deletion_protection = True

    code, out, records = fleet.apply(plan, "--yes")

    # The log first: Compute refuses the delete itself, which must not be what saves it.
    sent = [e for e in events(records) if e in ("intent", "failed", "done")]
    assert sent == [], broken("deletion-protection-read", f"acted on despite it: {records}")
    (skipped,) = [e for e in records if e["event"] == "skipped"]
    assert [s["code"] for s in skipped["skips"]] == ["protected"]
    assert "deletionProtection" in skipped["skips"][0]["detail"]
    assert code == 0, out


def test_a_disk_attached_after_the_plan_is_not_deleted(fleet: Fleet) -> None:
    fleet.gcp.world.disks.append(
        Disk(PROJECT, ZONE, "disk-orphan", labels={"task-id": ORPHAN_TASK})
    )
    plan = fleet.plan("--action", "delete", "--delete-data", "disk")
    assert ("disk", "delete") in {(i["kind"], i["action"]) for i in planned(plan)}
    disk = next(d for d in fleet.gcp.world.disks if d.name == "disk-orphan")
    disk.users.append("vm-healthy")

    code, out, records = fleet.apply(plan, "--yes")

    # The reaper's own read must stop it: Compute would refuse the delete too, which must not
    # be what saves it.
    assert "attached" in skip_codes(records), broken(
        "attachment-re-read", f"an attached disk was not skipped: {records}"
    )
    assert "disk-orphan" in [d.name for d in fleet.gcp.world.disks]
    assert code == 0, out


def test_an_unattached_fleet_disk_and_a_reserved_address_are_deleted(fleet: Fleet) -> None:
    fleet.gcp.world.disks.append(
        Disk(PROJECT, ZONE, "disk-orphan", labels={"task-id": ORPHAN_TASK})
    )
    fleet.gcp.world.addresses += [
        Address(PROJECT, REGION, "ip-orphan", labels={"task-id": ORPHAN_TASK}),
        Address(PROJECT, REGION, "ip-in-use", labels={"task-id": ORPHAN_TASK},
                status="IN_USE", users=["vm-healthy"]),
    ]  # fmt: skip
    plan = fleet.plan("--action", "delete", "--delete-data", "disk")

    code, out, records = fleet.apply(plan, "--yes")

    deleted = sorted((verb, kind, name) for verb, kind, name, _ in fleet.gcp.actions)
    assert deleted == [
        ("delete", "address", "ip-orphan"),
        ("delete", "disk", "disk-orphan"),
        ("delete", "instance", "vm-orphan"),
    ], records
    assert [a.name for a in fleet.gcp.world.addresses] == ["ip-in-use"]
    assert fleet.gcp.counts["regionOperations.wait"] >= 1
    assert "attached" in skip_codes(records)
    assert code == 0, out


def test_an_operation_that_ends_in_error_is_a_failure_naming_computes_code(fleet: Fleet) -> None:
    plan = fleet.plan("--action", "delete")
    fleet.gcp.faults.operation_errors["vm-orphan"] = (
        "RESOURCE_OPERATION_RATE_EXCEEDED",
        "Operation rate exceeded for resource 'vm-orphan'.",
    )

    code, out, records = fleet.apply(plan, "--yes")

    assert code == 1, broken("operation-error-fails", f"exit {code}: {out} {records}")
    (failed,) = [e for e in records if e["event"] == "failed"]
    assert "RESOURCE_OPERATION_RATE_EXCEEDED" in failed["detail"], failed
    assert "done" not in events(records)


def test_a_refusal_of_computes_is_a_failure_and_nothing_is_deleted(fleet: Fleet) -> None:
    """An attachment made between the last read and the delete: Compute refuses it (400
    resourceInUseByAnotherResource), and the log says so."""
    fleet.gcp.world.disks.append(
        Disk(PROJECT, ZONE, "disk-orphan", labels={"task-id": ORPHAN_TASK})
    )
    plan = fleet.plan("--action", "delete", "--delete-data", "disk", audit=("--kind", "disk"))
    disk = next(d for d in fleet.gcp.world.disks if d.name == "disk-orphan")

    def attach_before_the_delete(operation: str) -> None:
        if operation == "disks.delete":
            disk.users.append("vm-healthy")

    fleet.gcp.before = attach_before_the_delete
    code, out, records = fleet.apply(plan, "--yes")

    assert code == 1, out
    (failed,) = [e for e in records if e["event"] == "failed"]
    assert "HTTP 400" in failed["detail"] and "already being used by" in failed["detail"], failed
    assert disk in fleet.gcp.world.disks


def test_an_operation_not_seen_to_finish_within_the_budget_is_unfinished(fleet: Fleet) -> None:
    plan = fleet.plan()
    fleet.gcp.faults.slow_operations = 10**6  # never DONE

    code, out, records = fleet.apply(plan, "--yes", "--item-budget", "2s")

    assert code == 75, broken("unfinished-operation", f"exit {code}: {out}")
    (failed,) = [e for e in records if e["event"] == "failed"]
    assert "not seen to finish" in failed["detail"], failed


def test_a_second_apply_of_one_plan_acts_on_nothing(fleet: Fleet) -> None:
    fleet.gcp.world.disks.append(
        Disk(PROJECT, ZONE, "disk-orphan", labels={"task-id": ORPHAN_TASK})
    )
    plan = fleet.plan("--action", "delete", "--delete-data", "disk")
    code, out, _ = fleet.apply(plan, "--yes")
    assert code == 0, out
    first = list(fleet.gcp.actions)

    code, out, records = fleet.apply(plan, "--yes")

    assert fleet.gcp.actions == first, broken(
        "second-apply-acts-on-nothing", f"acted again: {fleet.gcp.actions[len(first) :]}"
    )
    assert "intent" not in events(records), records


def test_a_plan_item_without_a_numeric_id_is_never_acted_on(fleet: Fleet) -> None:
    plan = fleet.plan("--action", "delete")
    document = json.loads(plan.read_text())
    for item in document["items"]:
        item["uid"] = ""
    plan.write_text(json.dumps(document))

    code, out, _ = fleet.apply(plan, "--yes")

    assert fleet.gcp.actions == [], broken("bound-to-the-reviewed-id", f"{fleet.gcp.actions}")
    assert code == 75, out  # unreadable: the run did not complete
    assert "names no Compute Engine numeric id" in out, out


def test_a_plan_edited_to_name_another_instances_id_acts_on_nothing(fleet: Fleet) -> None:
    """The id read back must be the planned resource's: an edited uid that names another
    instance of the zone (the healthy one) is read, seen not to be it, and skipped."""
    plan = fleet.plan("--action", "delete")
    healthy = fleet.instance("vm-healthy")
    assert healthy is not None
    document = json.loads(plan.read_text())
    for item in document["items"]:
        item["uid"] = healthy.id
    plan.write_text(json.dumps(document))

    code, out, records = fleet.apply(plan, "--yes")

    assert fleet.gcp.actions == [], f"acted on {fleet.gcp.actions}"
    assert skip_codes(records) == ["not-the-planned-resource"], records
    assert code == 0, out


def test_a_delete_whose_answer_is_lost_is_asked_again_and_done_once(fleet: Fleet) -> None:
    """Compute deletes, and its answer is lost (a 503 on the way back): the reaper asks again
    with the same requestId and Compute answers with the first request's Operation. Sent
    once, it would be a failure; asked again without the id, a 404 for what it deleted."""
    plan = fleet.plan("--action", "delete")
    fleet.gcp.faults.lost_answers["instances.delete"] = 1

    code, out, records = fleet.apply(plan, "--yes")

    asked = [s.query.get("requestId", "") for s in fleet.gcp.requests("instances.delete")]
    assert code == 0 and events(records) == ["start", "intent", "done", "end"], broken(
        "lost-answer-asked-again-once", f"exit {code}, {records}, requestIds {asked}: {out}"
    )
    assert len(asked) == 2 and asked[0] == asked[1] and len(asked[0]) == 36, asked
    assert [a[0] for a in fleet.gcp.actions] == ["delete"], fleet.gcp.actions

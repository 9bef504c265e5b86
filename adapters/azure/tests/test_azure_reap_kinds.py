"""Reaping what a run left, every kind: a resource group whole, or each resource by its id
with its provider's api-version, then the group. Through the CLI with the real
azure-mgmt-resource (and compute, network, locks) against the fake ARM over HTTPS; the
reaper's attack scenarios with zero wrong actions."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from cloudguard_azure import demo
from cloudguard_azure.fake_arm.authorization.models import add_lock
from leaked_run import RUN, LeakedRun, leaked_run
from named_checks import broken
from test_azure_reaper import (
    Incident,
    digest,
    events,
    incident,
    log_limit_stops_before_acting,
    writes,
)

__all__ = ["incident"]  # the fixture, shared with test_azure_reaper

LEAKED_BY = ("--leaked-by", f"ci-run={RUN}")


@pytest.fixture
def run(incident: Incident) -> LeakedRun:
    incident.audit_args = LEAKED_BY
    return leaked_run(incident.arm.state, demo.SUB_PILOT)


def plan_leaked(incident: Incident, *extra: str) -> Path:
    # The run's disks and storage account hold data: deleted only when named.
    data = ("--delete-data", "disk,storage-account")
    return incident.plan("--verdict", "leaked", "--action", "delete", *data, *extra)


def apply(incident: Incident, plan: Path, *extra: str) -> tuple[int, str, list[dict[str, Any]]]:
    code, out, log = incident.apply(plan, "--yes", *LEAKED_BY, *extra)
    return code, out, events(log)


def skip_codes(log: list[dict[str, Any]]) -> list[str]:
    return [s["code"] for e in log if e["event"] == "skipped" for s in e["skips"]]


def group_gone(incident: Incident, run: LeakedRun) -> bool:
    sub = incident.arm.state.subscription(demo.SUB_PILOT)
    return sub is not None and run.group.casefold() not in sub.groups


def test_the_plan_deletes_the_group_whole_with_what_it_held_reviewed(
    incident: Incident, run: LeakedRun
) -> None:
    plan = json.loads(plan_leaked(incident).read_text())

    (item,) = plan["items"]
    assert (item["kind"], item["name"], item["action"]) == ("resource-group", run.group, "delete")
    members = {m["name"]: m["kind"] for m in item["members"]}
    assert set(members) == run.names - {run.group}
    assert all(m["verdict"] == "leaked" and (m["uid"] or m["created"]) for m in item["members"])


def test_the_group_is_deleted_whole_once_and_nothing_else(
    incident: Incident, run: LeakedRun
) -> None:
    plan = plan_leaked(incident)
    before = {vm.name for vm in incident.arm.state.vms.values()} - {run.vm.name}
    incident.arm.faults.reset_counts()

    code, out, log = apply(incident, plan)

    assert code == 0, out
    assert writes(incident.arm) == {"DELETE resource_group_delete": 1}
    assert group_gone(incident, run)
    assert {vm.name for vm in incident.arm.state.vms.values()} == before  # the rest untouched
    assert not incident.arm.state.generic, "the run's storage account or cluster survived"
    assert [e["event"] for e in log] == ["start", "intent", "done", "end"]


def test_by_kind_deletes_each_resource_by_id_then_the_group(
    incident: Incident, run: LeakedRun
) -> None:
    plan = plan_leaked(incident, "--by-kind")
    kinds = [i["kind"] for i in json.loads(plan.read_text())["items"]]
    assert kinds[0] == "vm" and kinds[-1] == "resource-group"

    code, out, _ = apply(incident, plan)

    deleted = [line for line in incident.arm.faults.log if line.startswith("DELETE ")]
    assert any("storageAccounts/stci77leaked?api-version=2024-01-01" in d for d in deleted), broken(
        "deleted-with-its-providers-api-version",
        f"not deleted with its provider's newest stable api-version: {deleted}",
    )
    assert code == 0, out
    # Each once: the VM (its NIC goes with it), its two disks, its public IP, the storage
    # account and the cluster by id, then the group, empty.
    assert writes(incident.arm) == {
        "DELETE vm_delete": 1,
        "DELETE disk_delete": 2,
        "DELETE public_ip_delete": 1,
        "DELETE resource_delete_by_id": 2,
        "DELETE resource_group_delete": 1,
    }
    assert group_gone(incident, run)


def _add_untagged(incident: Incident, run: LeakedRun) -> None:
    incident.arm.state.add_resource(
        demo.SUB_PILOT, run.group, "Microsoft.Web/sites", "someone-elses-app"
    )


def _recreate_storage(incident: Incident, run: LeakedRun) -> None:
    del incident.arm.state.generic[run.storage.id.casefold()]
    incident.arm.state.add_resource(
        demo.SUB_PILOT, run.group, run.storage.arm_type, run.storage.name,
        tags=run.storage.tags, created=run.storage.created + timedelta(hours=1),
    )  # fmt: skip


def _lock_storage(incident: Incident, run: LeakedRun) -> None:
    add_lock(incident.arm.state, run.storage.id, "keep-storage")


def _protect_cluster(incident: Incident, run: LeakedRun) -> None:
    run.cluster.tags["do-not-reap"] = "yes"


def _record_for_the_task(incident: Incident, run: LeakedRun) -> None:
    run.vm.tags["ci-run"] = "another-run"  # the VM is no longer the run's: not leaked


ATTACKS = {
    "raced-a-resource-in": (_add_untagged, "group-changed"),
    "member-re-created": (_recreate_storage, "not-the-planned-resource"),
    "member-locked": (_lock_storage, "protected"),
    "member-protected": (_protect_cluster, "protected"),
    "member-retagged": (_record_for_the_task, "verdict-changed"),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_group_whose_members_changed_since_the_plan_is_left_whole(
    incident: Incident, run: LeakedRun, attack: str
) -> None:
    change, expected = ATTACKS[attack]
    plan = plan_leaked(incident)
    change(incident, run)
    incident.arm.faults.reset_counts()

    code, out, log = apply(incident, plan)

    assert writes(incident.arm) == {}, broken(
        "the-group-is-left-whole", f"the group was acted on ({attack}): {out}"
    )
    assert not group_gone(incident, run), f"the group was deleted ({attack})"
    assert expected in skip_codes(log), f"expected skip {expected!r} ({attack}): {log}"
    assert code == 0, out


def test_an_edited_plan_cannot_delete_another_group(incident: Incident, run: LeakedRun) -> None:
    """The plan's group renamed to the fleet's: what that group holds was never reviewed."""
    plan = plan_leaked(incident)
    document = json.loads(plan.read_text())
    fleet = f"/subscriptions/{demo.SUB_PILOT}/resourceGroups/pilot"
    document["items"][0].update(id=fleet, name="pilot", group="pilot")
    plan.write_text(json.dumps(document))
    incident.arm.faults.reset_counts()

    code, out, log = apply(incident, plan)

    assert writes(incident.arm) == {}, f"an edited plan deleted the fleet's group: {out}"
    # The fleet's group carries no tags, and holds what the plan never reviewed.
    assert {"tags-unreadable", "group-changed"} & set(skip_codes(log)), log
    assert code == 0, out


def test_a_group_delete_whose_answer_is_lost_is_not_sent_again(
    incident: Incident, run: LeakedRun
) -> None:
    plan = plan_leaked(incident)
    incident.arm.faults.inject(500, match=f"/{run.group}?", times=1, method="DELETE")
    incident.arm.faults.reset_counts()

    code, out, log = apply(incident, plan)

    deletes = [line for line in incident.arm.faults.log if line.startswith("DELETE ")]
    assert len(deletes) == 1, broken(
        "sent-once", f"the group's DELETE was sent {len(deletes)} times: {deletes}"
    )
    assert [e["event"] for e in log] == ["start", "intent", "failed", "end"]
    assert code == 1, out


def test_a_dry_run_reads_the_group_and_deletes_nothing(incident: Incident, run: LeakedRun) -> None:
    plan = plan_leaked(incident)
    incident.arm.faults.reset_counts()

    code, out, log = incident.apply(plan, *LEAKED_BY)

    assert writes(incident.arm) == {} and code == 0, out
    assert [e["event"] for e in events(log)] == ["start", "would-act", "end"], json.dumps(
        events(log)
    )
    assert incident.arm.faults.requests["GET resources_list_by_group"] >= 1
    assert digest(plan) in out


def test_a_reap_log_that_cannot_take_the_groups_intent_deletes_nothing(
    incident: Incident, run: LeakedRun, tmp_path: Path
) -> None:
    """A disk full under the log (RLIMIT_FSIZE on a real child): the group's DELETE is never
    sent without its intent on disk; the next run deletes it, once."""
    log_limit_stops_before_acting(incident, plan_leaked(incident), tmp_path, *LEAKED_BY)
    assert group_gone(incident, run)

"""`cloudguard reap` against the fake ARM over HTTPS, through the real azure-mgmt-compute.

The incident fleet (the demo's) is audited live with `cloudguard audit
--provider azure --format json`; that real report is planned from, and the
plan applied. The fake's state and request counters are the proof of what
was (not) done; the reap log is the proof of what was said.
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cloudguard_azure import demo
from cloudguard_azure.fake_arm import FakeArm
from cloudguard_azure.fake_arm.authorization.models import add_lock
from cloudguard_azure.fake_arm.compute.models import VirtualMachine, attach_disk, recreate_vm
from in_process_cli import cli, digest
from named_checks import broken
from trusted_config import write_trusted
from waiting import wait_until

from cloudguard.reap.locks import lock_directory, plan_lock, resource_lock


@dataclass
class Incident:
    arm: FakeArm
    home: Path
    repo: Path
    shas: list[str]
    work: Path
    kinds: tuple[str, ...] = ()  # `--kind` of the audit (default: every kind)
    audit_args: tuple[str, ...] = ()  # more of the audit's options (`--leaked-by ...`)

    @property
    def vm(self) -> VirtualMachine:
        found = self.arm.state.vm(demo.SUB_PILOT, "pilot", demo.INCIDENT_VM)
        assert found is not None, f"{demo.INCIDENT_VM} is gone from the fake"
        return found

    def live(self) -> list[str]:
        return [
            "--credential",
            "fake-arm",
            "--management-endpoint",
            self.arm.base_url,
            "--ca-bundle",
            self.arm.ca_pem,
        ]

    def audit(self) -> Path:
        report = self.work / "audit.json"
        done = cli(
            "audit",
            "--provider",
            "azure",
            "--subscription",
            demo.SUB_FLEET,
            "--subscription",
            demo.SUB_PILOT,
            *self.live(),
            "--controller-home",
            str(self.home),
            "--repo",
            str(self.repo),
            *(arg for kind in self.kinds for arg in ("--kind", kind)),
            *self.audit_args,
            "--format",
            "json",
            "--output",
            str(report),
        )
        assert done.exit_code == 1, done.output  # the incident is an orphan
        return report

    def plan(self, *extra: str) -> Path:
        plan = self.work / "plan.json"
        done = cli("reap", "plan", "--from", str(self.audit()), "--output", str(plan), *extra)
        assert done.exit_code == 0, done.output
        return plan

    def apply(
        self, plan: Path, *extra: str, home: Path | None = None, log: Path | None = None
    ) -> tuple[int, str, Path]:
        log = log or self.work / "reap.jsonl"
        approve = ("--approve", digest(plan)) if "--yes" in extra and plan.exists() else ()
        done = cli(
            "reap",
            "apply",
            str(plan),
            *self.live(),
            "--controller-home",
            str(home or self.home),
            "--repo",  # the evidence the audit read, which the plan binds
            str(self.repo),
            "--log",
            str(log),
            *approve,
            *extra,
        )
        return done.exit_code, done.output, log


@pytest.fixture
def incident(arm: FakeArm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Incident:
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)  # no cloudguard.toml from the repository applies
    # This test's own lock directory, and the subscriptions `apply --yes` may act in.
    (tmp_path / "run").mkdir(mode=0o700)
    write_trusted(
        work / "cloudguard.toml",
        f'[reap]\naccounts = ["{demo.SUB_PILOT}", "{demo.SUB_FLEET}"]\n'
        f'lock-directory = "{tmp_path / "run"}"\n',
    )
    shas = demo.make_repo(tmp_path / "repo")
    home = demo.make_controller_home(tmp_path / "controller")
    demo.seed_fleet(arm.state, shas, datetime.now(UTC))
    return Incident(arm, home, tmp_path / "repo", shas, work)


def events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def power_states(arm: FakeArm) -> dict[str, str]:
    return {vm.name: vm.power_state for vm in arm.state.vms.values()}


def writes(arm: FakeArm) -> dict[str, int]:
    """Every request that could change something."""
    return {k: n for k, n in arm.faults.requests.items() if not k.startswith("GET ")}


# -- plan -----------------------------------------------------------------------------


def test_plan_from_a_real_audit_names_only_the_incident_vm_and_touches_nothing(
    incident: Incident,
) -> None:
    plan_path = incident.plan()
    incident.arm.faults.reset_counts()

    plan = json.loads(plan_path.read_text())
    assert plan["schema"] == "cloudguard.reap.plan" and plan["schema_version"] == 4
    (item,) = plan["items"]
    assert (item["provider"], item["name"], item["group"], item["kind"]) == (
        "azure",
        demo.INCIDENT_VM,
        "pilot",
        "vm",
    )
    assert item["action"] == "deallocate"  # the reversible one, by default
    assert item["verdict"] == "orphan"
    assert item["tags"] == {
        "task-id": demo.INCIDENT_TASK,
        "repository-generation": demo.NOT_A_COMMIT,
    }
    assert set(item["reasons"]) >= {"no-controller-record", "fixture-task-id"}
    assert item["audited_at"] == plan["audit"]["generated_at"]
    assert incident.arm.faults.total_requests == 0  # planning never touches the cloud


# -- apply ------------------------------------------------------------------------------


def test_a_dry_run_re_reads_the_vm_and_acts_on_nothing(incident: Incident) -> None:
    plan = incident.plan()
    before = power_states(incident.arm)
    incident.arm.faults.reset_counts()

    code, out, log = incident.apply(plan)

    assert writes(incident.arm) == {}, broken(
        "a-dry-run-sends-nothing", "a dry run sent a POST or DELETE"
    )
    assert power_states(incident.arm) == before
    assert code == 0, out
    assert incident.arm.faults.requests["GET vm_get"] == 1  # re-verified live all the same
    # What one item costs: the VM, its group's and subscription's tags, locks at three scopes.
    reads = {k: n for k, n in incident.arm.faults.requests.items() if k.startswith("GET ")}
    assert reads == {
        "GET vm_get": 1,
        "GET resource_group_get": 1,
        "GET subscriptions_get": 1,
        "GET locks_list": 3,
    }
    assert [e["event"] for e in events(log)] == ["start", "would-act", "end"]
    assert "would-act" in out and demo.INCIDENT_VM in out and "--yes" in out


def test_apply_deallocates_the_incident_vm_and_leaves_the_fleet_alone(incident: Incident) -> None:
    plan = incident.plan()
    before = power_states(incident.arm)
    incident.arm.faults.reset_counts()

    code, out, log = incident.apply(plan, "--yes")

    assert code == 0, out
    assert incident.vm.power_state == "deallocated"
    assert power_states(incident.arm) == {**before, demo.INCIDENT_VM: "deallocated"}
    assert writes(incident.arm) == {"POST vm_deallocate": 1}
    assert incident.arm.faults.requests["GET operation"] >= 1  # waited on the LRO
    kinds = [e["event"] for e in events(log)]
    assert kinds == ["start", "intent", "done", "end"]  # the intent is on disk first
    header = events(log)[0]
    assert header["schema"] == "cloudguard.reap.log" and header["schema_version"] == 1
    assert events(log)[-1]["exit_code"] == 0


def _retag(key: str, value: str) -> Callable[[Incident], None]:
    def change(incident: Incident) -> None:
        incident.vm.tags[key] = value

    return change


def _record_appears(incident: Incident) -> None:
    (incident.home / "state" / f"{demo.INCIDENT_TASK}.meta").write_text("phase=running\n")


def _vm_deleted(incident: Incident) -> None:
    del incident.arm.state.vms[incident.vm.id.casefold()]


def _tags_removed(incident: Incident) -> None:
    incident.vm.tags.clear()


SKIPS: dict[str, tuple[Callable[[Incident], None], str]] = {
    "task-retagged": (_retag("task-id", "task-0f00"), "task-tag-changed"),
    "generation-changed": (_retag("repository-generation", "0" * 40), "generation-changed"),
    "protected": (_retag("Do-Not-Reap", ""), "protected"),
    "protected-cloudguard": (_retag("cloudguard-protect", "yes"), "protected"),
    "record-appeared": (_record_appears, "verdict-changed"),
    "gone": (_vm_deleted, "gone"),
    "tags-unreadable": (_tags_removed, "tags-unreadable"),
}


@pytest.mark.parametrize("case", list(SKIPS))
def test_a_vm_that_changed_since_the_plan_is_skipped_and_left_alone(
    incident: Incident, case: str
) -> None:
    change, expected = SKIPS[case]
    plan = incident.plan()
    change(incident)
    incident.arm.faults.reset_counts()

    code, out, log = incident.apply(plan, "--yes")

    assert writes(incident.arm) == {}, broken(
        "left-alone", f"{demo.INCIDENT_VM} was acted on ({case}): {out}"
    )
    if case != "gone":
        assert incident.vm.power_state == "running", f"{demo.INCIDENT_VM} was acted on ({case})"
    skipped = [e for e in events(log) if e["event"] == "skipped"]
    codes = [s["code"] for e in skipped for s in e["skips"]]
    assert expected in codes, broken(
        "the-skip-is-named", f"expected skip {expected!r} ({case}), log: {events(log)}"
    )
    assert code == 0, out  # a safety skip is a success
    assert expected in out


def test_action_delete_deletes_the_vm(incident: Incident) -> None:
    plan = incident.plan("--action", "delete")
    assert json.loads(plan.read_text())["items"][0]["action"] == "delete"
    before = power_states(incident.arm)
    incident.arm.faults.reset_counts()

    code, out, _ = incident.apply(plan, "--yes")

    assert code == 0, out
    assert incident.arm.state.vm(demo.SUB_PILOT, "pilot", demo.INCIDENT_VM) is None
    assert writes(incident.arm) == {"DELETE vm_delete": 1}
    del before[demo.INCIDENT_VM]
    assert power_states(incident.arm) == before  # the rest of the fleet is untouched


def test_an_orphan_disk_has_no_reversible_action_and_is_deleted_only_when_asked(
    incident: Incident,
) -> None:
    incident.arm.state.add_disk(
        demo.SUB_PILOT,
        "pilot",
        "disk-fm7c799d-data",
        tags={"task-id": demo.INCIDENT_TASK, "repository-generation": demo.NOT_A_COMMIT},
    )
    reversible = json.loads(incident.plan().read_text())
    assert [i["name"] for i in reversible["items"]] == [demo.INCIDENT_VM]
    (left,) = reversible["not_planned"]
    assert left["name"] == "disk-fm7c799d-data" and "no reversible action" in left["why"]

    data = json.loads(incident.plan("--action", "delete").read_text())
    (listed,) = data["not_planned"]  # it holds data: listed, not deleted, unless named
    assert listed["name"] == "disk-fm7c799d-data" and "holds data: unknown" in listed["why"]

    plan = incident.plan("--action", "delete", "--delete-data", "disk")
    code, out, _ = incident.apply(plan, "--yes")

    assert code == 0, out
    assert incident.arm.state.disks_in(demo.SUB_PILOT) == []
    assert incident.arm.faults.requests["DELETE disk_delete"] == 1
    assert incident.arm.faults.requests["GET disk_get"] == 1


def test_a_failed_long_running_operation_is_exit_1_and_logged_failed(incident: Incident) -> None:
    plan = incident.plan()
    incident.arm.faults.fail_operations(match="/deallocate")

    code, out, log = incident.apply(plan, "--yes")

    assert code == 1, out
    assert [e["event"] for e in events(log)] == ["start", "intent", "failed", "end"]
    failed = events(log)[2]
    assert "OperationPreempted" in failed["detail"]
    assert incident.vm.power_state == "running"


def test_a_403_on_the_action_is_exit_1_and_logged_failed(incident: Incident) -> None:
    plan = incident.plan()
    incident.arm.faults.inject(403, match="/deallocate")

    code, out, log = incident.apply(plan, "--yes")

    assert code == 1, out
    (failed,) = [e for e in events(log) if e["event"] == "failed"]
    assert "HTTP 403 AuthorizationFailed" in failed["detail"]
    assert incident.vm.power_state == "running"


def test_a_vm_that_cannot_be_read_is_not_acted_on_and_the_run_did_not_run(
    incident: Incident,
) -> None:
    plan = incident.plan()
    incident.arm.faults.inject(403, match=demo.INCIDENT_VM)  # the GET
    incident.arm.faults.reset_counts()

    code, out, log = incident.apply(plan, "--yes")

    assert code == 75, out
    assert writes(incident.arm) == {}
    (unreadable,) = [e for e in events(log) if e["event"] == "unreadable"]
    assert "403" in unreadable["detail"]


@pytest.mark.parametrize("breakage", ["missing", "bad-worker-record"])
def test_unreadable_controller_evidence_is_75_and_nothing_is_acted_on(
    incident: Incident, breakage: str
) -> None:
    plan = incident.plan()
    if breakage == "bad-worker-record":
        (incident.home / "workers" / "w-09.json").write_text("{not json")
    else:
        shutil.rmtree(incident.home)  # the home the plan binds is gone
    incident.arm.faults.reset_counts()

    code, out, log = incident.apply(plan, "--yes")

    assert code == 75, out
    assert incident.arm.faults.total_requests == 0, "the cloud was read without the evidence"
    assert incident.vm.power_state == "running"
    assert [e["event"] for e in events(log)] == ["start", "did-not-run", "end"]
    assert "controller home" in events(log)[1]["detail"]


def test_a_plan_of_the_wrong_schema_is_refused_with_97(incident: Incident) -> None:
    audit_report = incident.audit()  # an audit report is not a plan
    incident.arm.faults.reset_counts()

    code, out, _ = incident.apply(audit_report, "--yes")

    assert code == 97, out
    assert "not a cloudguard.reap.plan v3 or v4 plan" in out
    assert incident.arm.faults.total_requests == 0


# -- attacks: identity, edited plans, attachment, scopes, retries -----------------------------


def _edit(plan: Path, change: Callable[[dict[str, Any]], None]) -> None:
    document = json.loads(plan.read_text())
    change(document)
    plan.write_text(json.dumps(document))


def _item_for(template: dict[str, Any], vm: VirtualMachine, **changes: Any) -> dict[str, Any]:
    """A plan item for `vm` with its true identity: only the live verdict can stop it."""
    return {
        **template,
        "account": vm.subscription,
        "group": vm.group,
        "id": vm.id,
        "name": vm.name,
        "tags": dict(vm.tags),
        "uid": vm.vm_id,
        "created": vm.time_created.isoformat(),
        **changes,
    }


@pytest.mark.parametrize("differs", ["both", "unique-id", "creation-time"])
def test_a_vm_re_created_under_its_name_after_the_plan_is_left_alone(
    incident: Incident, differs: str
) -> None:
    """Either half of the reviewed identity (vmId, timeCreated) that differs is another VM."""
    plan = incident.plan()
    old = incident.vm
    again = recreate_vm(incident.arm.state, old, old.time_created - timedelta(days=1))
    if differs == "creation-time":
        again.vm_id = old.vm_id
    elif differs == "unique-id":
        again.time_created = old.time_created
    incident.arm.faults.reset_counts()

    code, out, log = incident.apply(plan, "--yes")

    assert writes(incident.arm) == {}, broken(
        "a-re-created-vm-is-left-alone",
        f"the re-created VM ({differs} differs) was acted on: {out}",
    )
    (skipped,) = [e for e in events(log) if e["event"] == "skipped"]
    assert [s["code"] for s in skipped["skips"]] == ["not-the-planned-resource"]
    assert f"re-created since the plan: unique id {again.vm_id}" in skipped["skips"][0]["detail"]
    assert code == 0, out


def _empty_home(root: Path) -> Path:
    for folder in ("state", "queue", "workers"):
        (root / folder).mkdir(parents=True)
    return root


def test_apply_naming_other_evidence_than_the_plan_binds_is_refused(
    incident: Incident, tmp_path: Path
) -> None:
    """The issue's case: a suspect (its task has a record; its generation is no commit) added
    to the plan with its true identity is skipped with the plan's evidence; an apply given
    another, empty controller home would judge it an orphan. The plan binds where its audit
    read the evidence, and an apply naming other sources reads nothing and acts on nothing."""
    state = incident.arm.state
    suspect = state.add_vm(
        demo.SUB_PILOT,
        "pilot",
        "vm-suspect",
        tags={"task-id": "task-2a41b0", "repository-generation": demo.NOT_A_COMMIT},
        time_created=datetime.now(UTC) - timedelta(days=2),
    )
    plan = incident.plan()
    _edit(plan, lambda d: d["items"].append(_item_for(d["items"][0], suspect)))
    incident.arm.faults.reset_counts()

    code, out, _ = incident.apply(plan, "--yes", home=_empty_home(tmp_path / "empty"))

    assert writes(incident.arm) == {}, broken(
        "other-evidence-is-refused", f"the suspect was acted on: {writes(incident.arm)}"
    )
    assert suspect.power_state == "running", "the suspect was acted on"
    assert code == 2, out
    assert "must re-read the evidence the plan's audit read" in out
    assert str(incident.home) in out and incident.arm.faults.total_requests == 0

    # The control: with the evidence the plan binds, the suspect is judged a suspect.
    code, out, log = incident.apply(plan, "--yes")
    assert suspect.power_state == "running", "the suspect was acted on"
    verdicts = [e for e in events(log) if e.get("name") == "vm-suspect"]
    assert [s["code"] for s in verdicts[0]["skips"]] == ["verdict-changed"], verdicts
    assert incident.vm.power_state == "deallocated" and code == 0, out


def test_edited_plans_cannot_widen_what_is_done(incident: Incident) -> None:
    """The issue's four edits: a claimed controller record, a VM without the task tag, a
    leaked-by tag the policy does not name, a renamed policy task tag. Each item is the
    true identity of a live VM; only the live verdict stands between it and an action."""
    state = incident.arm.state
    healthy = state.vm(demo.SUB_FLEET, "fm-workers", "vm-fm2a41b0-wkr-01")
    assert healthy is not None
    stray = state.add_vm(demo.SUB_PILOT, "pilot", "vm-stray", tags={"run-id": "ci-77"})
    swept = state.add_vm(
        demo.SUB_PILOT, "pilot", "vm-swept", tags={"task-id": "task-2a41b0", "sweep": "s1"}
    )
    plan = incident.plan()

    def widen(document: dict[str, Any]) -> None:
        template = document["items"][0]
        document["items"] = [
            _item_for(template, healthy, controller_record="found"),
            _item_for(template, stray, verdict="leaked", leaked_by=["run-id=ci-77"]),
            _item_for(template, swept, verdict="leaked", leaked_by=["sweep=s1"]),
        ]
        document["policy"]["task_tag"] = "run-id"  # the plan's policy is never read
        document["policy"]["leaked_by"] = ["run-id=ci-77", "sweep=s1"]

    _edit(plan, widen)
    incident.arm.faults.reset_counts()

    code, out, log = incident.apply(plan, "--yes", "--leaked-by", "run-id=ci-77")

    assert writes(incident.arm) == {}, broken(
        "an-edited-plan-cannot-widen",
        f"an edited plan widened what was done: {writes(incident.arm)}",
    )
    skipped = [{s["code"] for s in e["skips"]} for e in events(log) if e["event"] == "skipped"]
    assert skipped == [{"verdict-changed"}, {"no-task-tag"}, {"verdict-changed"}], events(log)
    assert code == 0, out


def test_a_disk_attached_after_the_plan_is_not_deleted(incident: Incident) -> None:
    state = incident.arm.state
    disk = state.add_disk(
        demo.SUB_PILOT, "pilot", "disk-orphan", tags={"task-id": demo.INCIDENT_TASK}
    )
    plan = incident.plan("--action", "delete", "--delete-data", "disk")
    healthy = state.vm(demo.SUB_PILOT, "pilot", "vm-fm9b17aa-wkr-01")
    assert healthy is not None
    attach_disk(state, healthy, disk)
    incident.arm.faults.reset_counts()

    code, out, log = incident.apply(plan, "--yes")

    sent = incident.arm.faults.requests["DELETE disk_delete"]
    assert sent == 0, broken(
        "an-attached-disk-is-kept",
        f"DELETE sent {sent} time(s) for a disk attached to {healthy.name}",
    )
    skipped = [e for e in events(log) if e["event"] == "skipped" and e["kind"] == "disk"]
    assert [s["code"] for s in skipped[0]["skips"]] == ["attached"]
    assert code == 0, out


@pytest.mark.parametrize("missing", ["subscription", "group"])
def test_a_missing_subscription_or_group_is_unreadable_not_gone(
    incident: Incident, missing: str
) -> None:
    plan = incident.plan()
    sub = incident.arm.state.subscription(demo.SUB_PILOT)
    assert sub is not None
    if missing == "group":
        sub.groups.pop("pilot")
    else:
        incident.arm.state.subscriptions.pop(demo.SUB_PILOT.casefold())

    code, out, log = incident.apply(plan, "--yes")

    kinds = [e["event"] for e in events(log)]
    assert code == 75, broken(
        "a-missing-scope-is-unreadable",
        f"a missing {missing} was taken for a VM that is gone: {kinds} {out}",
    )
    (unreadable,) = [e for e in events(log) if e["event"] == "unreadable"]
    assert "NotFound" in unreadable["detail"]


def test_apply_takes_the_sweeps_retry_budget(incident: Incident) -> None:
    """An item whose reads answer 500 `--retries` + 1 times is unreadable after exactly that
    many GETs. The fake answers the next one: a reaper that retried past its budget (say,
    azure-core's default ten) is answered at once, and acts, rather than backing off for
    minutes before the count shows it."""
    plan = incident.plan()
    incident.arm.faults.inject(500, match=f"/virtualMachines/{demo.INCIDENT_VM}?", times=3)
    incident.arm.faults.reset_counts()

    code, out, log = incident.apply(plan, "--yes", "--retries", "2")

    sent = incident.arm.faults.requests["GET vm_get"]
    assert sent == 3, broken(
        "the-retry-budget-is-applied", f"{sent} GETs for --retries 2 (and {writes(incident.arm)})"
    )
    assert writes(incident.arm) == {} and code == 75, out
    (unreadable,) = [e for e in events(log) if e["event"] == "unreadable"]
    assert "HTTP 500" in unreadable["detail"]


def test_an_item_past_its_time_budget_is_unreadable_and_named(incident: Incident) -> None:
    """A Retry-After wait that would pass `--item-budget` is not started: the item is
    unreadable after its first read, named with what its time went on, and the run exits 75.
    The wait (2 s) is longer than the budget (1 s), so no clock decides it; and the fake
    answers the read after it, so a reaper that waits anyway is seen at once, acting."""
    plan = incident.plan()
    incident.arm.faults.inject(
        503, match=f"/virtualMachines/{demo.INCIDENT_VM}?", times=1, retry_after=2
    )
    incident.arm.faults.reset_counts()

    code, out, log = incident.apply(plan, "--yes", "--retries", "8", "--item-budget", "1s")

    sent = incident.arm.faults.requests["GET vm_get"]
    assert sent == 1, broken(
        "the-item-budget-stops-its-reads",
        f"{sent} GETs: a 2 s wait was started within a 1 s budget ({writes(incident.arm)})",
    )
    assert writes(incident.arm) == {} and code == 75, out
    (unreadable,) = [e for e in events(log) if e["event"] == "unreadable"]
    assert unreadable["name"] == demo.INCIDENT_VM
    assert "time budget of 1 s per item spent" in unreadable["detail"], unreadable
    assert "the next wait, 2.0 s for Retry-After, would pass it" in unreadable["detail"]


def test_an_action_whose_answer_is_lost_is_not_sent_again(incident: Incident) -> None:
    plan = incident.plan()
    incident.arm.faults.inject(500, match="/deallocate", times=1)
    incident.arm.faults.reset_counts()

    code, out, log = incident.apply(plan, "--yes")

    sent = incident.arm.faults.requests["POST vm_deallocate"]
    assert sent == 1, broken("sent-once", f"POST vm_deallocate sent {sent} times for one action")
    assert [e["event"] for e in events(log)] == ["start", "intent", "failed", "end"]
    assert code == 1, out


def _group_tag(incident: Incident) -> None:
    incident.arm.state.add_group(demo.SUB_PILOT, "pilot").tags["Do-Not-Reap"] = "finance"


def _subscription_tag(incident: Incident) -> None:
    sub = incident.arm.state.subscription(demo.SUB_PILOT)
    assert sub is not None
    sub.tags["cloudguard-protect"] = ""


def _lock(scope: str, level: str) -> Callable[[Incident], None]:
    def place(incident: Incident) -> None:
        scopes = {
            "subscription": f"/subscriptions/{demo.SUB_PILOT}",
            "group": f"/subscriptions/{demo.SUB_PILOT}/resourceGroups/pilot",
            "resource": incident.vm.id,
        }
        add_lock(incident.arm.state, scopes[scope], f"keep-{scope}", level)

    return place


PROTECTIONS: dict[str, tuple[Callable[[Incident], None], str]] = {
    "group-tag": (_group_tag, "its resource group pilot carries protection tag 'Do-Not-Reap'"),
    "subscription-tag": (_subscription_tag, "carries protection tag 'cloudguard-protect'"),
    "lock-subscription": (_lock("subscription", "CanNotDelete"), "'keep-subscription'"),
    "lock-group": (_lock("group", "ReadOnly"), "'keep-group' (ReadOnly)"),
    "lock-resource": (_lock("resource", "CanNotDelete"), "'keep-resource' (CanNotDelete)"),
}


@pytest.mark.parametrize("case", list(PROTECTIONS))
def test_protection_from_above_or_a_management_lock_skips_the_vm(
    incident: Incident, case: str
) -> None:
    protect, expected = PROTECTIONS[case]
    plan = incident.plan("--action", "delete")
    protect(incident)
    incident.arm.faults.reset_counts()

    code, out, log = incident.apply(plan, "--yes")

    assert writes(incident.arm) == {}, broken(
        "left-alone", f"acted on despite {case}: {writes(incident.arm)}"
    )
    (skipped,) = [e for e in events(log) if e["event"] == "skipped"]
    details = [s["detail"] for s in skipped["skips"] if s["code"] == "protected"]
    assert any(expected in d for d in details), details
    assert code == 0, out


def test_delete_reports_the_dependents_it_leaves_billing(incident: Incident) -> None:
    state = incident.arm.state
    data = state.add_disk(demo.SUB_PILOT, "pilot", "disk-fm7c799d-data")
    attach_disk(state, incident.vm, data)
    incident.vm.nic_delete_option = "Detach"
    plan = incident.plan("--action", "delete")

    code, out, log = incident.apply(plan, "--yes")

    assert code == 0, out
    (done,) = [e for e in events(log) if e["event"] == "done"]
    assert any(left.endswith("/disks/disk-fm7c799d-data") for left in done["left_billing"])
    assert any(left.startswith("NIC ") for left in done["left_billing"])
    assert "leaves billing: data disk" in out
    assert state.disk(demo.SUB_PILOT, "pilot", "disk-fm7c799d-data") is not None


# -- reviewed is applied: digest, age, accounts ------------------------------------------------


def test_yes_without_the_reviewed_digest_is_refused(incident: Incident) -> None:
    plan = incident.plan()
    incident.arm.faults.reset_counts()
    done = cli(
        "reap",
        "apply",
        str(plan),
        *incident.live(),
        "--controller-home",
        str(incident.home),
        "--yes",
    )
    assert done.exit_code == 2 and "--approve sha256:" in done.output
    assert incident.arm.faults.total_requests == 0


def test_a_plan_changed_since_review_is_refused(incident: Incident) -> None:
    plan = incident.plan()
    reviewed = digest(plan)
    _edit(plan, lambda d: d["items"][0]["tags"].update({"note": "edited"}))

    _refused_before_any_request(
        incident, plan, "--yes", "--approve", reviewed, code=97,
        check="a-changed-plan-is-refused", what="a plan changed since review was applied",
        says=(f"approved {reviewed}", "changed since review"),
    )  # fmt: skip


def _refused_before_any_request(
    incident: Incident,
    plan: Path,
    *args: str,
    code: int,
    check: str,
    what: str,
    says: tuple[str, ...],
) -> None:
    """Applying `plan` with `args` ends with `code`, saying each of `says`, before a single
    request reaches the cloud. Taken instead, it fails at `check`: `what` happened."""
    incident.arm.faults.reset_counts()
    got, out, _ = incident.apply(plan, *args)
    assert got == code, broken(check, f"{what} (exit {got}): {out}")
    assert all(said in out for said in says), out
    assert incident.arm.faults.total_requests == 0
    assert incident.vm.power_state == "running"


@pytest.mark.parametrize("given", ["empty", "prefix-only", "a-prefix-of-the-digest"])
def test_only_the_whole_digest_approves(incident: Incident, given: str) -> None:
    plan = incident.plan()
    approval = {
        "empty": "",
        "prefix-only": "sha256:",
        "a-prefix-of-the-digest": digest(plan)[: len("sha256:") + 16],
    }[given]

    _refused_before_any_request(
        incident, plan, "--yes", "--approve", approval, code=97,
        check="only-the-whole-digest-approves", what=f"--approve {approval!r} was taken",
        says=("is not the plan that was approved",),
    )  # fmt: skip


@pytest.mark.parametrize("dated", ["plan", "audit"])
def test_a_plan_or_audit_dated_in_the_future_is_refused(incident: Incident, dated: str) -> None:
    plan = incident.plan()
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    if dated == "plan":
        _edit(plan, lambda d: d.update(created_at=tomorrow))
    else:
        _edit(plan, lambda d: d["audit"].update(generated_at=tomorrow))

    _refused_before_any_request(
        incident, plan, "--yes", code=2, check="a-future-plan-is-refused",
        what=f"a {dated} dated tomorrow was applied", says=("dated in the future",),
    )  # fmt: skip


def test_a_fresh_plan_of_an_old_audit_is_as_old_as_its_audit(incident: Incident) -> None:
    """What a plan knows is its audit's: planning again from an old report does not renew it."""
    plan = incident.plan()
    two_days_ago = (datetime.now(UTC) - timedelta(days=2)).isoformat()
    _edit(plan, lambda d: d["audit"].update(generated_at=two_days_ago))

    _refused_before_any_request(
        incident, plan, "--yes", code=2, check="the-audits-age-counts",
        what="a plan of a 2-day-old audit was applied",
        says=("the plan is too old: its audit is from",),
    )  # fmt: skip


@pytest.mark.parametrize("where", ["option", "config"])
def test_a_plan_older_than_max_age_is_refused(incident: Incident, where: str) -> None:
    plan = incident.plan()
    two_days_ago = (datetime.now(UTC) - timedelta(days=2)).isoformat()
    _edit(
        plan,
        lambda d: (d.update(created_at=two_days_ago), d["audit"].update(generated_at=two_days_ago)),
    )
    extra: tuple[str, ...] = ()
    if where == "config":
        config = incident.work / "cloudguard.toml"
        write_trusted(config, config.read_text() + 'max-age = "1d"\n')
    else:
        extra = ("--max-age", "1d")

    _refused_before_any_request(
        incident, plan, "--yes", *extra, code=2, check="an-old-plan-is-refused",
        what="a plan 2 days old was applied",
        says=("the plan is too old", "older than --max-age 24.0h"),
    )  # fmt: skip


def test_yes_needs_an_allowlist_and_an_item_outside_it_is_refused(incident: Incident) -> None:
    plan = incident.plan()
    config = incident.work / "cloudguard.toml"
    config.unlink()
    incident.arm.faults.reset_counts()

    code, out, _ = incident.apply(plan, "--yes")
    assert code == 2 and "[reap] accounts" in out, out

    write_trusted(config, f'[reap]\naccounts = ["{demo.SUB_FLEET}"]\n')
    code, out, _ = incident.apply(plan, "--yes")
    assert code == 2, broken(
        "only-listed-accounts", f"acted outside [reap] accounts (exit {code}): {out}"
    )
    assert f"outside [reap] accounts: {demo.INCIDENT_VM} in {demo.SUB_PILOT}" in out
    assert incident.arm.faults.total_requests == 0


# -- one apply at a time ---------------------------------------------------------------------


def test_a_second_apply_of_a_plan_being_applied_does_nothing_but_say_so(
    incident: Incident,
) -> None:
    plan = incident.plan()
    incident.arm.faults.reset_counts()

    with plan_lock(lock_directory(incident.work.parent / "run"), digest(plan)) as held:
        assert held.held
        code, out, log = incident.apply(plan, "--yes")

    assert incident.arm.faults.total_requests == 0, broken(
        "the-plan-lock-is-honoured", f"read or acted while locked: {out}"
    )
    assert code == 75, out
    assert "another apply of this plan" in out
    assert [e["event"] for e in events(log)] == ["start", "did-not-run", "end"]


def test_a_resource_another_apply_holds_is_not_read(incident: Incident) -> None:
    plan = incident.plan()
    incident.arm.faults.reset_counts()

    locks = lock_directory(incident.work.parent / "run")
    with resource_lock(locks, "azure", incident.vm.id) as held:
        assert held.held
        code, out, log = incident.apply(plan, "--yes")

    assert writes(incident.arm) == {}, broken(
        "the-resource-lock-is-honoured", f"acted on a resource another apply holds: {out}"
    )
    assert code == 75, out
    assert [e["event"] for e in events(log)] == ["start", "held-elsewhere", "end"]


def test_two_applies_racing_send_one_action(incident: Incident, tmp_path: Path) -> None:
    """Two real processes apply one plan at once: one delete, never two.

    The overlap is forced, not hoped for: the fake holds the first apply's delete in flight
    (its locks held) until the second apply has ended, or sent a delete of its own. (A
    delete, not a deallocate: a VM being deallocated is `already-done` to the second
    apply, locks or no locks.)"""
    plan = incident.plan("--action", "delete")
    incident.arm.faults.reset_counts()
    incident.arm.state.hold_operations = True
    command = [
        sys.executable, "-m", "cloudguard", "reap", "apply", str(plan), *incident.live(),
        "--controller-home", str(incident.home), "--repo", str(incident.repo),
        "--yes", "--approve", digest(plan),
    ]  # fmt: skip

    def start(n: int) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*command, "--log", str(tmp_path / f"race-{n}.jsonl")],
            cwd=incident.work,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    first = start(1)
    try:
        in_flight = wait_until(lambda: incident.arm.faults.requests["DELETE vm_delete"] == 1)
        assert in_flight, "the first apply never sent its delete"
        second = start(2)
        wait_until(
            lambda: (
                second.poll() is not None or incident.arm.faults.requests["DELETE vm_delete"] > 1
            )
        )
    finally:
        incident.arm.state.hold_operations = False  # the barrier opens: both may end
        first_out = first.communicate(timeout=120)[0]
    second_out = second.communicate(timeout=120)[0]

    sent = incident.arm.faults.requests["DELETE vm_delete"]
    assert sent == 1, broken(
        "one-action-for-two-applies",
        f"DELETE vm_delete sent {sent} times by two applies: {first_out}\n{second_out}",
    )
    assert (first.returncode, second.returncode) == (0, 75), f"{first_out}\n{second_out}"
    assert "another apply of this plan" in second_out
    assert incident.arm.state.vm(demo.SUB_PILOT, "pilot", demo.INCIDENT_VM) is None


# -- a reap log that fails mid-run ------------------------------------------------------------


def test_a_reap_log_hitting_a_size_limit_mid_run_is_75_and_nothing_is_sent(
    incident: Incident, tmp_path: Path
) -> None:
    """A real `cloudguard reap apply` child under RLIMIT_FSIZE: its log can take the start
    line but not the whole intent. It must stop with 75 before the deallocate, and the
    torn intent must not be continued by the next run's first record."""
    log_limit_stops_before_acting(incident, incident.plan(), tmp_path)


def log_limit_stops_before_acting(
    incident: Incident, plan: Path, tmp_path: Path, *extra: str
) -> None:
    """`plan`'s one action is never sent when its intent cannot be written (`extra`: more
    of apply's options, the same in every run). --no-history: the limit would stop the
    history store's first write (75, before any action, as it should) before the log's,
    which is what this test is about."""
    command = [
        sys.executable, "-m", "cloudguard", "reap", "apply", str(plan), *incident.live(),
        "--controller-home", str(incident.home), "--repo", str(incident.repo), "--no-history",
        *extra,
    ]  # fmt: skip
    # How long this plan's start line is: a dry run's, less the 2 letters "dry-run" has
    # over "apply" (every other field has a fixed length).
    probe = tmp_path / "probe.jsonl"
    dry = subprocess.run([*command, "--log", str(probe)], cwd=incident.work, check=False)
    assert dry.returncode == 0
    start_line = len(probe.read_bytes().split(b"\n")[0]) + 1 - 2
    log = tmp_path / "limit.jsonl"
    log.write_bytes(b'{"event": "end"}\n' * 4)
    limit = log.stat().st_size + start_line + 40
    incident.arm.faults.reset_counts()

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    child = subprocess.run(
        [*command, "--log", str(log), "--yes", "--approve", digest(plan)],
        cwd=incident.work,
        preexec_fn=limited,
        capture_output=True,
        text=True,
        check=False,
    )

    assert writes(incident.arm) == {}, broken(
        "nothing-after-a-failed-log-write", f"acted with a log that cannot be written: {child}"
    )
    assert child.returncode == 75, child.stdout + child.stderr
    assert "stopped: cannot write reap log" in child.stderr
    data = log.read_bytes()
    assert len(data) == limit and not data.endswith(b"\n")  # the intent, torn

    code, out, _ = incident.apply(plan, "--yes", *extra, log=log)

    assert code == 0, out
    lines = log.read_bytes().split(b"\n")
    torn = lines[5]
    assert torn.startswith(b'{"event": "intent"') and b"run" not in torn[-40:]
    assert [json.loads(line)["event"] for line in lines[6:-1]] == ["start", "intent", "done", "end"]


# -- addresses ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("account", "id_", "why"),
    [
        (demo.SUB_PILOT, f"/subscriptions/{demo.SUB_PILOT}/resourceGroups/../providers/"
         "Microsoft.Compute/virtualMachines/vm-1", "'..' segment"),
        (demo.SUB_PILOT, f"/subscriptions/{demo.SUB_PILOT}/resourceGroups/pilot/providers/"
         "Microsoft.Compute/virtualMachines/.", "'..' segment"),
        ("", f"/subscriptions/{demo.SUB_PILOT}/resourceGroups/pilot/providers/"
         "Microsoft.Compute/virtualMachines/vm-1", "names no subscription"),
        (demo.SUB_FLEET, f"/subscriptions/{demo.SUB_PILOT}/resourceGroups/pilot/providers/"
         "Microsoft.Compute/virtualMachines/vm-1", "id names subscription"),
    ],
)  # fmt: skip
def test_a_reaper_address_with_dot_segments_or_no_account_is_refused(
    account: str, id_: str, why: str
) -> None:
    from cloudguard_azure.reaper import _address

    from cloudguard.cloud.reaping import ReadError
    from cloudguard.documents.plan import PlanItem

    item = PlanItem(
        provider="azure", account=account, region="westeurope", group="pilot", id=id_,
        name="vm-1", kind="vm", action="deallocate", tags={}, verdict="orphan", reasons=(),
        power_state="running", audited_at=datetime.now(UTC),
    )  # fmt: skip
    with pytest.raises(ReadError, match=why.replace("'..' segment", "'.' or '..' segment")):
        _address(item, ReadError)


def test_with_dependents_deletes_the_fleet_disks_a_delete_left_and_only_those(
    incident: Incident,
) -> None:
    state = incident.arm.state
    fleet_tags = dict(incident.vm.tags)
    data = state.add_disk(demo.SUB_PILOT, "pilot", "disk-fm7c799d-data", tags=fleet_tags)
    kept = state.add_disk(
        demo.SUB_PILOT, "pilot", "disk-fm7c799d-keep", tags={**fleet_tags, "do-not-reap": ""}
    )
    for disk in (data, kept):
        attach_disk(state, incident.vm, disk)
    vm_id = incident.vm.id
    plan = incident.plan("--action", "delete", "--with-dependents")
    assert json.loads(plan.read_text())["with_dependents"] is True
    incident.arm.faults.reset_counts()

    code, out, log = incident.apply(plan, "--yes")

    assert code == 0, out
    assert state.vm(demo.SUB_PILOT, "pilot", demo.INCIDENT_VM) is None
    assert state.disk(demo.SUB_PILOT, "pilot", "disk-fm7c799d-data") is None, out
    assert state.disk(demo.SUB_PILOT, "pilot", "disk-fm7c799d-keep") is not None
    assert writes(incident.arm) == {"DELETE vm_delete": 1, "DELETE disk_delete": 1}
    dependents = [e for e in events(log) if e.get("dependent_of")]
    assert {(e["name"], e["event"]) for e in dependents} == {
        ("disk-fm7c799d-data", "intent"),
        ("disk-fm7c799d-data", "done"),
        ("disk-fm7c799d-keep", "skipped"),
    }
    assert all(e["dependent_of"] == vm_id for e in dependents)


def test_with_dependents_needs_delete(incident: Incident) -> None:
    done = cli("reap", "plan", "--from", str(incident.audit()), "--with-dependents")
    assert done.exit_code == 2 and "use --action delete" in done.output


def test_a_plan_from_a_resource_graph_audit_carries_the_identity_apply_checks(
    incident: Incident,
) -> None:
    report = incident.work / "graph-audit.json"
    done = cli(
        "audit", "--provider", "azure", "--engine", "resource-graph",
        "--subscription", demo.SUB_PILOT, *incident.live(), "--controller-home",
        str(incident.home), "--repo", str(incident.repo),
        "--format", "json", "--output", str(report),
    )  # fmt: skip
    assert done.exit_code == 1, done.output
    plan = incident.work / "plan.json"
    assert cli("reap", "plan", "--from", str(report), "--output", str(plan)).exit_code == 0
    (item,) = json.loads(plan.read_text())["items"]
    assert item["uid"] == incident.vm.vm_id

    code, out, _ = incident.apply(plan, "--yes")

    assert code == 0, out
    assert incident.vm.power_state == "deallocated"

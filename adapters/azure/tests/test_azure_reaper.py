"""`cloudguard reap` against the fake ARM over HTTPS, through the real azure-mgmt-compute.

The incident fleet (the demo's) is audited live with `cloudguard audit
--provider azure --format json`; that real report is planned from, and the
plan applied. The fake's state and request counters are the proof of what
was (not) done; the reap log is the proof of what was said.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import typer
from cloudguard_azure import demo
from cloudguard_azure.fake_arm import FakeArm
from cloudguard_azure.fake_arm.state import VirtualMachine
from typer.testing import CliRunner

from cloudguard.audit.command import audit
from cloudguard.reap.command import app as reap_app


def cli(*args: str) -> Any:
    app = typer.Typer()

    @app.callback()
    def main() -> None:  # a group, so commands are invoked as users do
        pass

    app.command("audit")(audit)
    app.add_typer(reap_app, name="reap")
    return CliRunner().invoke(app, list(args))


@dataclass
class Incident:
    arm: FakeArm
    home: Path
    repo: Path
    shas: list[str]
    work: Path

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
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    (work / "cloudguard.toml").write_text(
        f'[reap]\naccounts = ["{demo.SUB_PILOT}", "{demo.SUB_FLEET}"]\n'
    )
    shas = demo.make_repo(tmp_path / "repo")
    home = demo.make_controller_home(tmp_path / "controller")
    demo.seed_fleet(arm.state, shas, datetime.now(UTC))
    return Incident(arm, home, tmp_path / "repo", shas, work)


def digest(plan: Path) -> str:
    return "sha256:" + hashlib.sha256(plan.read_bytes()).hexdigest()


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
    assert plan["schema"] == "cloudguard.reap.plan" and plan["schema_version"] == 2
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

    assert writes(incident.arm) == {}, "a dry run sent a POST or DELETE"
    assert power_states(incident.arm) == before
    assert code == 0, out
    assert incident.arm.faults.requests["GET vm_get"] == 1  # re-verified live all the same
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

    assert writes(incident.arm) == {}, f"{demo.INCIDENT_VM} was acted on ({case}): {out}"
    if case != "gone":
        assert incident.vm.power_state == "running", f"{demo.INCIDENT_VM} was acted on ({case})"
    skipped = [e for e in events(log) if e["event"] == "skipped"]
    codes = [s["code"] for e in skipped for s in e["skips"]]
    assert expected in codes, f"expected skip {expected!r} ({case}), log: {events(log)}"
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

    plan = incident.plan("--action", "delete")
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
    incident: Incident, tmp_path: Path, breakage: str
) -> None:
    plan = incident.plan()
    home = tmp_path / "no-such-home"
    if breakage == "bad-worker-record":
        home = incident.home
        (home / "workers" / "w-09.json").write_text("{not json")
    incident.arm.faults.reset_counts()

    code, out, log = incident.apply(plan, "--yes", home=home)

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
    assert "not a cloudguard.reap.plan v2 plan" in out
    assert incident.arm.faults.total_requests == 0

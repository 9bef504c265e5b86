"""`cloudguard reap` on AWS: boto3 against moto in server mode on 127.0.0.1.

The audit is the real one (the AWS adapter's sweep, the engine, the JSON
formatter); the plan is built from that JSON and applied by the reap engine
with the adapter's own reaper, so every byte between audit and EC2 is the
code users run.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from aws_helpers import AMI, ec2, session
from cloudguard_aws.adapter import AwsAdapter

from cloudguard.audit.cost import bundled_prices
from cloudguard.audit.engine import EvidenceSources, run_audit
from cloudguard.audit.findings import Policy
from cloudguard.audit.formats.json_report import JsonFormat
from cloudguard.audit.model import SweepRequest, SweepResult
from cloudguard.reap.engine import apply_plan
from cloudguard.reap.log import ReapLog
from cloudguard.reap.model import Plan
from cloudguard.reap.plan import build_plan

ORPHAN_TASK = "cloud-noenv-c7"
KNOWN_TASK = "task-0042"


def launch(endpoint: str, tags: dict[str, str]) -> str:
    spec = [{"ResourceType": "instance", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}]
    answer = ec2(endpoint).run_instances(
        ImageId=AMI, MinCount=1, MaxCount=1, InstanceType="m5.xlarge", TagSpecifications=spec
    )
    return str(answer["Instances"][0]["InstanceId"])


def state_of(endpoint: str, instance: str) -> str:
    answer = ec2(endpoint).describe_instances(InstanceIds=[instance])
    return str(answer["Reservations"][0]["Instances"][0]["State"]["Name"])


@pytest.fixture
def fleet(endpoint: str, tmp_path: Path) -> dict[str, Any]:
    home = tmp_path / "controller"
    for folder in ("state", "queue", "workers"):
        (home / folder).mkdir(parents=True)
    (home / "state" / f"{KNOWN_TASK}.meta").write_text("phase=running\n")
    orphan = launch(endpoint, {"task-id": ORPHAN_TASK, "Name": "wkr-01"})
    healthy = launch(endpoint, {"task-id": KNOWN_TASK, "Name": "wkr-02"})
    return {"endpoint": endpoint, "home": home, "orphan": orphan, "healthy": healthy}


def request(fleet: dict[str, Any]) -> SweepRequest:
    return SweepRequest(endpoint=fleet["endpoint"], regions=("us-east-1",))


class LiveAws:
    def __init__(self, fleet: dict[str, Any]) -> None:
        self.request = request(fleet)

    def read(self) -> SweepResult:
        return AwsAdapter(session_factory=session).sweep(self.request)


def plan_for(fleet: dict[str, Any], action: str = "deallocate") -> Plan:
    report = run_audit(
        [LiveAws(fleet)],
        EvidenceSources(controller_home=str(fleet["home"])),
        Policy(grace=timedelta(0)),  # just launched, yet no record: an orphan, not pending
        bundled_prices(),
        datetime.now(UTC),
    )
    document = json.loads(JsonFormat().render(report))
    return build_plan(
        document, source="audit.json", verdicts=[], requested_action=action, now=datetime.now(UTC)
    )


def apply(
    fleet: dict[str, Any], plan: Plan, tmp_path: Path, *, execute: bool = True
) -> tuple[int, list[dict[str, Any]]]:
    from cloudguard.audit.evidence import controller_home_tasks

    path = tmp_path / "reap.jsonl"
    log = ReapLog(path)
    try:
        code = apply_plan(
            plan,
            plan_path="plan.json",
            open_reaper=lambda name: AwsAdapter(session_factory=session).reaper(request(fleet)),
            controller_tasks=lambda: controller_home_tasks(fleet["home"]),
            log=log,
            execute=execute,
        )
    finally:
        log.close()
    return code, [json.loads(line) for line in path.read_text().splitlines()]


def test_the_orphan_is_stopped_by_default_and_the_healthy_instance_runs_on(
    fleet: dict[str, Any], tmp_path: Path
) -> None:
    plan = plan_for(fleet)
    (item,) = plan.items
    assert (item.id, item.action, item.verdict) == (fleet["orphan"], "stop", "orphan")

    code, events = apply(fleet, plan, tmp_path)

    assert code == 0, events
    assert [e["event"] for e in events] == ["start", "intent", "done", "end"]
    assert state_of(fleet["endpoint"], fleet["orphan"]) in {"stopping", "stopped"}
    assert state_of(fleet["endpoint"], fleet["healthy"]) == "running"


def test_a_dry_run_stops_nothing(fleet: dict[str, Any], tmp_path: Path) -> None:
    code, events = apply(fleet, plan_for(fleet), tmp_path, execute=False)

    assert state_of(fleet["endpoint"], fleet["orphan"]) == "running", "a dry run stopped it"
    assert [e["event"] for e in events] == ["start", "would-act", "end"]
    assert code == 0, events


def test_action_delete_terminates(fleet: dict[str, Any], tmp_path: Path) -> None:
    plan = plan_for(fleet, "delete")
    assert [i.action for i in plan.items] == ["terminate"]

    code, events = apply(fleet, plan, tmp_path)

    assert code == 0, events
    assert state_of(fleet["endpoint"], fleet["orphan"]) in {"shutting-down", "terminated"}
    assert state_of(fleet["endpoint"], fleet["healthy"]) == "running"


@pytest.mark.parametrize("tag", ["do-not-reap", "Cloudguard-Protect"])
def test_a_protection_tag_added_after_the_plan_skips_the_instance(
    fleet: dict[str, Any], tmp_path: Path, tag: str
) -> None:
    plan = plan_for(fleet, "delete")
    ec2(fleet["endpoint"]).create_tags(
        Resources=[fleet["orphan"]], Tags=[{"Key": tag, "Value": ""}]
    )

    code, events = apply(fleet, plan, tmp_path)

    assert state_of(fleet["endpoint"], fleet["orphan"]) == "running", (
        f"the protected instance was acted on: {events}"
    )
    (skipped,) = [e for e in events if e["event"] == "skipped"]
    assert [s["code"] for s in skipped["skips"]] == ["protected"], events
    assert code == 0


def test_an_instance_terminated_since_the_plan_is_gone_not_failed(
    fleet: dict[str, Any], tmp_path: Path
) -> None:
    plan = plan_for(fleet)
    ec2(fleet["endpoint"]).terminate_instances(InstanceIds=[fleet["orphan"]])

    code, events = apply(fleet, plan, tmp_path)

    skips = [s["code"] for e in events if e["event"] == "skipped" for s in e["skips"]]
    assert skips == ["gone"], f"expected skip 'gone', log: {events}"
    assert code == 0, events


def test_an_unattached_fleet_volume_is_deleted_only_with_action_delete(
    fleet: dict[str, Any], tmp_path: Path
) -> None:
    client = ec2(fleet["endpoint"])
    volume = client.create_volume(
        AvailabilityZone="us-east-1a",
        Size=100,
        VolumeType="gp3",
        TagSpecifications=[
            {"ResourceType": "volume", "Tags": [{"Key": "task-id", "Value": ORPHAN_TASK}]}
        ],
    )["VolumeId"]
    assert [n.id for n in plan_for(fleet).not_planned] == [volume]  # no reversible action

    plan = plan_for(fleet, "delete")
    assert {(i.kind, i.action) for i in plan.items} == {("vm", "terminate"), ("disk", "delete")}
    code, events = apply(fleet, plan, tmp_path)

    assert code == 0, events
    assert (
        client.describe_volumes(Filters=[{"Name": "volume-id", "Values": [volume]}])["Volumes"]
        == []
    )

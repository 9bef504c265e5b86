"""`cloudguard reap` on AWS, through the CLI: boto3 against moto in server mode on 127.0.0.1.

`cloudguard audit --provider aws` sweeps moto, `reap plan` plans from its JSON,
`reap apply` re-derives and acts through the adapter's own reaper: every byte
between the audit and EC2 is the code users run. The credentials are a
profile of the test's own (moto's keys), named with `--credential`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aws_helpers import AMI, ec2, reap_workspace
from in_process_cli import cli, digest
from named_checks import broken
from throttling_proxy import Throttling, throttling_proxy
from trusted_config import write_trusted

ORPHAN_TASK = "cloud-noenv-c7"
KNOWN_TASK = "task-0042"
ACCOUNT = "123456789012"  # moto's


def launch(endpoint: str, tags: dict[str, str], **extra: Any) -> str:
    spec = [{"ResourceType": "instance", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}]
    answer = ec2(endpoint).run_instances(
        ImageId=AMI,
        MinCount=1,
        MaxCount=1,
        InstanceType="m5.xlarge",
        TagSpecifications=spec,
        **extra,
    )
    return str(answer["Instances"][0]["InstanceId"])


def volume(endpoint: str, tags: dict[str, str]) -> str:
    return str(
        ec2(endpoint).create_volume(
            AvailabilityZone="us-east-1a",
            Size=100,
            VolumeType="gp3",
            TagSpecifications=[
                {
                    "ResourceType": "volume",
                    "Tags": [{"Key": k, "Value": v} for k, v in tags.items()],
                }
            ],
        )["VolumeId"]
    )


def _tags(tags: dict[str, str]) -> list[dict[str, str]]:
    return [{"Key": k, "Value": v} for k, v in tags.items()]


def state_of(endpoint: str, instance: str) -> str:
    answer = ec2(endpoint).describe_instances(InstanceIds=[instance])
    return str(answer["Reservations"][0]["Instances"][0]["State"]["Name"])


@dataclass
class Fleet:
    endpoint: str
    home: Path
    work: Path
    orphan: str
    healthy: str

    def live(self) -> list[str]:
        return ["--credential", "fake", "--management-endpoint", self.endpoint]

    def plan(self, *extra: str) -> Path:
        report = self.work / "audit.json"
        done = cli(
            "audit",
            "--provider",
            "aws",
            "--region",
            "us-east-1",
            *self.live(),
            "--controller-home",
            str(self.home),
            "--grace",
            "0s",  # just launched, yet no record: an orphan, not pending
            "--format",
            "json",
            "--output",
            str(report),
        )
        assert done.exit_code == 1, done.output
        plan = self.work / "plan.json"
        done = cli("reap", "plan", "--from", str(report), "--output", str(plan), *extra)
        assert done.exit_code == 0, done.output
        return plan

    def apply(self, plan: Path, *extra: str) -> tuple[int, str, list[dict[str, Any]]]:
        log = self.work / "reap.jsonl"
        approve = ("--approve", digest(plan)) if "--yes" in extra else ()
        done = cli(
            "reap",
            "apply",
            str(plan),
            *self.live(),
            "--controller-home",
            str(self.home),
            "--grace",
            "0s",
            "--log",
            str(log),
            *approve,
            *extra,
        )
        records = (
            [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        )
        return done.exit_code, done.output, records


@pytest.fixture
def fleet(endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fleet:
    work, home = reap_workspace(tmp_path, monkeypatch, ACCOUNT)
    (home / "state" / f"{KNOWN_TASK}.meta").write_text("phase=running\n")
    orphan = launch(endpoint, {"task-id": ORPHAN_TASK, "Name": "wkr-01"})
    healthy = launch(endpoint, {"task-id": KNOWN_TASK, "Name": "wkr-02"})
    return Fleet(endpoint, home, work, orphan, healthy)


def skip_codes(records: list[dict[str, Any]]) -> list[str]:
    return [s["code"] for e in records if e["event"] == "skipped" for s in e["skips"]]


def test_the_orphan_is_stopped_by_default_and_the_healthy_instance_runs_on(fleet: Fleet) -> None:
    plan = fleet.plan()
    (item,) = json.loads(plan.read_text())["items"]
    assert (item["id"], item["action"], item["verdict"]) == (fleet.orphan, "stop", "orphan")

    code, out, records = fleet.apply(plan, "--yes")

    assert code == 0, out
    assert [e["event"] for e in records] == ["start", "intent", "done", "end"]
    assert state_of(fleet.endpoint, fleet.orphan) in {"stopping", "stopped"}
    assert state_of(fleet.endpoint, fleet.healthy) == "running"


def test_a_dry_run_stops_nothing(fleet: Fleet) -> None:
    code, out, records = fleet.apply(fleet.plan())

    assert state_of(fleet.endpoint, fleet.orphan) == "running", broken(
        "a-dry-run-stops-nothing", "a dry run stopped it"
    )
    assert [e["event"] for e in records] == ["start", "would-act", "end"]
    assert code == 0, out


def test_action_delete_terminates(fleet: Fleet) -> None:
    plan = fleet.plan("--action", "delete")
    assert [i["action"] for i in json.loads(plan.read_text())["items"]] == ["terminate"]

    code, out, _ = fleet.apply(plan, "--yes")

    assert code == 0, out
    assert state_of(fleet.endpoint, fleet.orphan) in {"shutting-down", "terminated"}
    assert state_of(fleet.endpoint, fleet.healthy) == "running"


@pytest.mark.parametrize("tag", ["do-not-reap", "Cloudguard-Protect"])
def test_a_protection_tag_added_after_the_plan_skips_the_instance(fleet: Fleet, tag: str) -> None:
    plan = fleet.plan("--action", "delete")
    ec2(fleet.endpoint).create_tags(Resources=[fleet.orphan], Tags=[{"Key": tag, "Value": ""}])

    code, out, records = fleet.apply(plan, "--yes")

    assert state_of(fleet.endpoint, fleet.orphan) == "running", broken(
        "left-alone", f"the protected instance was acted on: {records}"
    )
    assert skip_codes(records) == ["protected"], records
    assert code == 0, out


@pytest.mark.parametrize("attribute", ["DisableApiTermination", "DisableApiStop"])
def test_termination_or_stop_protection_is_protection(fleet: Fleet, attribute: str) -> None:
    plan = fleet.plan("--action", "delete")
    ec2(fleet.endpoint).modify_instance_attribute(
        InstanceId=fleet.orphan, **{attribute: {"Value": True}}
    )

    code, out, records = fleet.apply(plan, "--yes")

    # The log first: EC2 would refuse the terminate itself, which must not be what saves it.
    sent = [e["event"] for e in records if e["event"] in ("intent", "failed", "done")]
    assert sent == [], broken("left-alone", f"acted on despite {attribute}: {sent}")
    assert state_of(fleet.endpoint, fleet.orphan) == "running"
    (skipped,) = [e for e in records if e["event"] == "skipped"]
    assert [s["code"] for s in skipped["skips"]] == ["protected"]
    assert f"({attribute}) is on" in skipped["skips"][0]["detail"]
    assert code == 0, out


def test_an_instance_terminated_since_the_plan_is_gone_not_failed(fleet: Fleet) -> None:
    plan = fleet.plan()
    ec2(fleet.endpoint).terminate_instances(InstanceIds=[fleet.orphan])

    code, out, records = fleet.apply(plan, "--yes")

    assert skip_codes(records) == ["gone"], broken(
        "a-terminated-instance-is-gone", f"expected skip 'gone', log: {records}"
    )
    assert code == 0, out


def test_an_unattached_fleet_volume_is_deleted_only_with_action_delete(fleet: Fleet) -> None:
    client = ec2(fleet.endpoint)
    orphan_volume = volume(fleet.endpoint, {"task-id": ORPHAN_TASK})
    reversible = json.loads(fleet.plan().read_text())
    assert [n["id"] for n in reversible["not_planned"]] == [orphan_volume]  # no reversible action

    plan = fleet.plan("--action", "delete", "--delete-data", "disk")  # a volume holds data
    items = json.loads(plan.read_text())["items"]
    assert {(i["kind"], i["action"]) for i in items} == {("vm", "terminate"), ("disk", "delete")}
    code, out, _ = fleet.apply(plan, "--yes")

    assert code == 0, out
    found = client.describe_volumes(Filters=[{"Name": "volume-id", "Values": [orphan_volume]}])
    assert found["Volumes"] == []


def test_a_volume_attached_after_the_plan_is_not_deleted(fleet: Fleet) -> None:
    orphan_volume = volume(fleet.endpoint, {"task-id": ORPHAN_TASK})
    plan = fleet.plan("--action", "delete", "--delete-data", "disk")
    ec2(fleet.endpoint).attach_volume(
        VolumeId=orphan_volume, InstanceId=fleet.healthy, Device="/dev/sdf"
    )

    code, out, records = fleet.apply(plan, "--yes")

    # The log first: EC2 would refuse to delete an attached volume, which must not be what saves it.
    sent = [e["event"] for e in records if e.get("id") == orphan_volume and e["event"] == "intent"]
    assert sent == [], broken(
        "an-attached-volume-is-kept",
        f"DeleteVolume sent for the attached volume {orphan_volume}: {out}",
    )
    left = ec2(fleet.endpoint).describe_volumes(VolumeIds=[orphan_volume])["Volumes"]
    assert left, f"the attached volume {orphan_volume} was deleted: {out}"
    (skipped,) = [e for e in records if e["event"] == "skipped"]
    assert skipped["id"] == orphan_volume
    assert [s["code"] for s in skipped["skips"]] == ["attached"]
    assert fleet.healthy in skipped["skips"][0]["detail"]
    assert code == 0, out


def _edit(plan: Path, change: Any) -> None:
    document = json.loads(plan.read_text())
    change(document)
    plan.write_text(json.dumps(document))


def test_edited_plans_cannot_widen_what_is_done(fleet: Fleet) -> None:
    """An untagged instance added; a record claimed; a leaked-by tag the policy lacks; the
    policy's task tag renamed: each item is skipped by the live verdict, nothing acted on."""
    stray = launch(fleet.endpoint, {"Name": "not-the-fleets", "run-id": "ci-77"})
    plan = fleet.plan("--action", "delete")
    template = json.loads(plan.read_text())["items"][0]

    def widen(document: dict[str, Any]) -> None:
        untagged = {**template, "id": stray, "name": "not-the-fleets", "tags": {"Name": "x"}}
        leaked = {
            **template,
            "id": stray,
            "verdict": "leaked",
            "leaked_by": ["run-id=ci-77"],
            "tags": {"run-id": "ci-77"},
        }
        claimed = {
            **template,
            "id": fleet.healthy,
            "tags": {"task-id": KNOWN_TASK, "Name": "wkr-02"},  # its own: only the verdict says no
            "controller_record": "found",
        }
        document["items"] = [untagged, leaked, claimed]
        document["policy"]["task_tag"] = "Name"  # the plan's policy is never read
        document["policy"]["leaked_by"] = ["run-id=ci-77"]

    _edit(plan, widen)

    code, out, records = fleet.apply(plan, "--yes")

    acted = [e["id"] for e in records if e["event"] in ("intent", "done")]
    assert acted == [], broken(
        "an-edited-plan-cannot-widen", f"an edited plan widened what was done: {acted}"
    )
    assert state_of(fleet.endpoint, stray) == "running"
    assert state_of(fleet.endpoint, fleet.healthy) == "running"
    per_item = [{s["code"] for s in e["skips"]} for e in records if e["event"] == "skipped"]
    assert len(per_item) == 3, records
    assert {"no-task-tag", "verdict-changed"} <= per_item[0]
    assert {"no-task-tag"} <= per_item[1]  # leaked by a tag --leaked-by never named
    assert {"verdict-changed"} <= per_item[2]  # the controller knows it: ok
    assert code == 0, out


def test_an_account_outside_the_allowlist_is_refused_before_any_request(
    fleet: Fleet, endpoint: str
) -> None:
    plan = fleet.plan()
    write_trusted(fleet.work / "cloudguard.toml", '[reap]\naccounts = ["999999999999"]\n')

    code, out, records = fleet.apply(plan, "--yes")

    assert code == 2, broken(
        "only-listed-accounts", f"acted outside [reap] accounts (exit {code}): {out}"
    )
    assert "outside [reap] accounts" in out and ACCOUNT in out
    assert records == []
    assert state_of(endpoint, fleet.orphan) == "running"


def test_credentials_of_another_account_are_unreadable_not_acted_on(fleet: Fleet) -> None:
    plan = fleet.plan()
    _edit(plan, lambda d: d["items"][0].update(account="999999999999"))
    config = fleet.work / "cloudguard.toml"
    write_trusted(config, config.read_text().replace(ACCOUNT, "999999999999"))

    code, out, records = fleet.apply(plan, "--yes")

    assert code == 75, broken(
        "another-accounts-credentials-unreadable",
        f"acted with credentials of another account (exit {code}): {out}",
    )
    (unreadable,) = [e for e in records if e["event"] == "unreadable"]
    assert "credentials are for 123456789012" in unreadable["detail"]
    assert state_of(fleet.endpoint, fleet.orphan) == "running"


def test_terminate_reports_the_volumes_it_leaves_billing(fleet: Fleet) -> None:
    kept = launch(
        fleet.endpoint,
        {"task-id": "task-kept"},
        BlockDeviceMappings=[
            {"DeviceName": "/dev/sdf", "Ebs": {"VolumeSize": 50, "DeleteOnTermination": False}}
        ],
    )
    plan = fleet.plan("--action", "delete")

    code, out, records = fleet.apply(plan, "--yes")

    assert code == 0, out
    (done,) = [e for e in records if e["event"] == "done" and e["id"] == kept]
    assert any("/dev/sdf" in left for left in done["left_billing"]), done
    assert "leaves billing: EBS volume vol-" in out


def test_the_action_client_never_retries() -> None:
    """botocore would re-send a terminate whose answer was lost; the acting client may not."""
    from cloudguard_aws.reaper import AwsReaper

    from cloudguard.cloud.records import SweepRequest

    reaper = AwsReaper(SweepRequest(endpoint="http://127.0.0.1:9", credential="fake"))
    try:
        client = reaper._ec2("us-east-1", acting=True)
        attempts = client.meta.config.retries["total_max_attempts"]
        assert attempts == 1, broken(
            "the-acting-client-never-retries", f"the acting client retries: {attempts} attempts"
        )
        assert reaper._ec2("us-east-1").meta.config.retries["total_max_attempts"] > 1
    finally:
        reaper.close()


def _apply_through(fleet: Fleet, proxy: str, plan: Path, *extra: str) -> tuple[int, str, Any]:
    log = fleet.work / "throttled.jsonl"
    done = cli(
        "reap", "apply", str(plan), "--credential", "fake", "--management-endpoint", proxy,
        "--controller-home", str(fleet.home), "--grace", "0s", "--log", str(log),
        "--yes", "--approve", digest(plan), *extra,
    )  # fmt: skip
    lines = log.read_text().splitlines() if log.exists() else []
    return done.exit_code, done.output, [json.loads(line) for line in lines]


def test_apply_takes_the_sweeps_retry_budget(fleet: Fleet) -> None:
    """Reads throttled `--retries` + 1 times: the item is unreadable after exactly that many.
    The proxy forwards the next one, so a reaper that retried past its budget is answered at
    once, and acts."""
    plan = fleet.plan()
    throttling = Throttling("DescribeInstances", first=3)
    with throttling_proxy(fleet.endpoint, throttling) as proxy:
        code, out, records = _apply_through(fleet, proxy, plan, "--retries", "2")

    sent = throttling.counts["DescribeInstances requests"]
    assert sent == 3, broken(
        "the-retry-budget-is-applied",
        f"{sent} reads for --retries 2 (the orphan is {state_of(fleet.endpoint, fleet.orphan)})",
    )
    assert code == 75, out
    assert [e["event"] for e in records] == ["start", "unreadable", "end"]
    assert state_of(fleet.endpoint, fleet.orphan) == "running"


def test_an_item_past_its_time_budget_is_unreadable_and_named(fleet: Fleet) -> None:
    """The item's first read is throttled, its answer held past `--item-budget`: no read is
    sent after it, the item is unreadable (named) and the run exits 75. The proxy forwards
    the next read, so a reaper that reads past its budget is answered at once, and acts.
    (On a loaded machine the budget may run out before the first read, making its
    clients: then no read is sent at all.)"""
    plan = fleet.plan()
    throttling = Throttling("DescribeInstances", first=1, hold=1.5)
    with throttling_proxy(fleet.endpoint, throttling) as proxy:
        code, out, records = _apply_through(
            fleet, proxy, plan, "--retries", "8", "--item-budget", "1s"
        )

    sent = throttling.counts["DescribeInstances requests"]
    assert sent <= 1, broken(
        "the-item-budget-stops-its-reads",
        f"{sent} reads: one was sent past the 1 s budget "
        f"(the orphan is {state_of(fleet.endpoint, fleet.orphan)})",
    )
    assert code == 75, out
    (unreadable,) = [e for e in records if e["event"] == "unreadable"]
    assert unreadable["id"] == fleet.orphan
    assert "time budget of 1 s per item spent" in unreadable["detail"], unreadable
    assert state_of(fleet.endpoint, fleet.orphan) == "running"


def test_with_dependents_deletes_the_fleet_volume_a_terminate_left(fleet: Fleet) -> None:
    kept = launch(
        fleet.endpoint,
        {"task-id": "task-kept"},
        BlockDeviceMappings=[
            {"DeviceName": "/dev/sdf", "Ebs": {"VolumeSize": 50, "DeleteOnTermination": False}}
        ],
    )
    client = ec2(fleet.endpoint)
    mapping = client.describe_instances(InstanceIds=[kept])["Reservations"][0]["Instances"][0]
    (volume_id,) = [
        m["Ebs"]["VolumeId"]
        for m in mapping["BlockDeviceMappings"]
        if not m["Ebs"].get("DeleteOnTermination")
    ]
    client.create_tags(Resources=[volume_id], Tags=_tags({"task-id": "task-kept"}))
    plan = fleet.plan("--action", "delete", "--with-dependents")

    code, out, records = fleet.apply(plan, "--yes")

    assert code == 0, out
    (dependent,) = [e for e in records if e.get("dependent_of") == kept and e["event"] == "done"]
    assert dependent["id"] == volume_id
    assert (
        client.describe_volumes(Filters=[{"Name": "volume-id", "Values": [volume_id]}])["Volumes"]
        == []
    ), f"the volume {volume_id} that terminate left was not deleted: {out}"

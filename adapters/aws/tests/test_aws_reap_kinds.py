"""Reaping what a run left on AWS, every kind with one clear delete (snapshots, Elastic IPs,
network interfaces, security groups, load balancers, besides instances and volumes), and the
exact command for what cloudguard does not reap. boto3 against moto in server mode."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import boto3
import pytest
from aws_helpers import AMI, FAKE_KEYS, ec2, reap_workspace
from aws_leaked_run import RUN, AwsLeakedRun, leaked_run
from named_checks import broken
from test_aws_reaper import cli, digest

ACCOUNT = "123456789012"
LEAKED_BY = ("--leaked-by", f"ci-run={RUN}")


@pytest.fixture
def run(endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AwsLeakedRun:
    reap_workspace(tmp_path, monkeypatch, ACCOUNT)
    return leaked_run(endpoint)


def evidence(tmp_path: Path) -> list[str]:
    return ["--controller-home", str(tmp_path / "controller")]


def live(endpoint: str) -> list[str]:
    return ["--credential", "fake", "--management-endpoint", endpoint]


def plan(endpoint: str, tmp_path: Path) -> Path:
    report, path = tmp_path / "audit.json", tmp_path / "plan.json"
    done = cli("audit", "--provider", "aws", "--region", "us-east-1", *live(endpoint),
               *evidence(tmp_path), *LEAKED_BY, "-f", "json", "-o", str(report))  # fmt: skip
    assert done.exit_code == 1, done.output
    done = cli("reap", "plan", str(report), "--verdict", "leaked", "--action", "delete",
               "--delete-data", "disk,snapshot", "--output", str(path))  # fmt: skip
    assert done.exit_code == 0, done.output
    return path


def apply(endpoint: str, tmp_path: Path, path: Path) -> tuple[int, str, list[dict[str, Any]]]:
    log = tmp_path / "reap.jsonl"
    done = cli("reap", "apply", str(path), *live(endpoint), *evidence(tmp_path), *LEAKED_BY,
               "--log", str(log), "--yes", "--approve", digest(path))  # fmt: skip
    return done.exit_code, done.output, [json.loads(line) for line in log.read_text().splitlines()]


def exists(endpoint: str, run: AwsLeakedRun) -> dict[str, bool]:
    client = ec2(endpoint)
    elbv2 = boto3.client("elbv2", endpoint_url=endpoint, region_name="us-east-1", **FAKE_KEYS)
    state = client.describe_instances(InstanceIds=[run.instance])["Reservations"][0]
    snapshots = {s["SnapshotId"] for s in client.describe_snapshots(OwnerIds=["self"])["Snapshots"]}
    return {
        "instance": state["Instances"][0]["State"]["Name"] not in ("shutting-down", "terminated"),
        "snapshot": run.snapshot in snapshots,
        "address": any(
            a["AllocationId"] == run.address for a in client.describe_addresses()["Addresses"]
        ),
        "interface": any(
            n["NetworkInterfaceId"] == run.interface
            for n in client.describe_network_interfaces()["NetworkInterfaces"]
        ),
        "group": any(
            g["GroupId"] == run.group for g in client.describe_security_groups()["SecurityGroups"]
        ),
        "balancer": any(
            b["LoadBalancerArn"] == run.balancer
            for b in elbv2.describe_load_balancers()["LoadBalancers"]
        ),
    }


def test_every_kind_with_one_clear_delete_is_reaped_and_the_rest_is_said(
    endpoint: str, run: AwsLeakedRun, tmp_path: Path
) -> None:
    path = plan(endpoint, tmp_path)
    document = json.loads(path.read_text())
    planned = {i["kind"] for i in document["items"]}
    assert planned == {"vm", "disk", "snapshot", "public-ip", "nic", "security-group",
                       "load-balancer"}  # fmt: skip
    (bucket,) = document["not_planned"]
    assert "--force" not in bucket["why"], broken(
        "the-printed-command-deletes-no-data", f"the command for a bucket: {bucket['why']}"
    )
    assert bucket["why"] == (
        f"not reaped by cloudguard (a aws bucket): to delete it, run "
        f"`aws s3 rb s3://{run.bucket}`; it holds data (0 objects): empty it "
        "deliberately, after looking at what it holds (the command deletes no data)"
    )

    code, out, log = apply(endpoint, tmp_path, path)

    assert code == 0, out
    assert exists(endpoint, run) == dict.fromkeys(exists(endpoint, run), False), out
    done = [e["kind"] for e in log if e["event"] == "done"]
    assert done[0] == "vm" and len(done) == len(set(e["id"] for e in log if e["event"] == "done"))


def test_a_snapshot_an_image_uses_is_not_deleted(
    endpoint: str, run: AwsLeakedRun, tmp_path: Path
) -> None:
    """An AMI of the account keeps its snapshot (moto registers an image with a snapshot
    of its own making: that one is tagged as the run's)."""
    client = ec2(endpoint)
    image = client.register_image(Name="from-the-run", RootDeviceName="/dev/sda1")
    (mapping,) = client.describe_images(ImageIds=[image["ImageId"]])["Images"][0][
        "BlockDeviceMappings"
    ]
    used = mapping["Ebs"]["SnapshotId"]
    tags = [{"Key": "ci-run", "Value": RUN}, {"Key": "task-id", "Value": "cloud-noenv-c7"}]
    client.create_tags(Resources=[used], Tags=tags)
    path = plan(endpoint, tmp_path)

    code, out, log = apply(endpoint, tmp_path, path)

    sent = [e for e in log if e["event"] == "intent" and e["id"] == used]
    assert not sent, broken(
        "a-snapshot-an-image-uses-is-kept", f"a DeleteSnapshot was sent for {used}: {out}"
    )
    snapshots = {s["SnapshotId"] for s in client.describe_snapshots(OwnerIds=["self"])["Snapshots"]}
    assert used in snapshots, out
    (skipped,) = [e for e in log if e["event"] == "skipped" and e["id"] == used]
    assert [s["code"] for s in skipped["skips"]] == ["attached"]
    assert image["ImageId"] in skipped["skips"][0]["detail"]
    assert code == 0, out


def _associate(endpoint: str, run: AwsLeakedRun) -> None:
    other = ec2(endpoint).run_instances(ImageId=AMI, MinCount=1, MaxCount=1)["Instances"][0]
    ec2(endpoint).associate_address(AllocationId=run.address, InstanceId=other["InstanceId"])


def _protect_balancer(endpoint: str, run: AwsLeakedRun) -> None:
    boto3.client(
        "elbv2", endpoint_url=endpoint, region_name="us-east-1", **FAKE_KEYS
    ).modify_load_balancer_attributes(
        LoadBalancerArn=run.balancer,
        Attributes=[{"Key": "deletion_protection.enabled", "Value": "true"}],
    )


def _tag_interface(endpoint: str, run: AwsLeakedRun) -> None:
    ec2(endpoint).create_tags(Resources=[run.interface], Tags=[{"Key": "do-not-reap", "Value": ""}])


ATTACKS: dict[str, tuple[Callable[[str, AwsLeakedRun], None], str, str]] = {
    "address-associated": (_associate, "address", "attached"),
    "balancer-deletion-protection": (_protect_balancer, "balancer", "protected"),
    "interface-protection-tag": (_tag_interface, "interface", "protected"),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_resource_that_changed_since_the_plan_is_left_alone(
    endpoint: str, run: AwsLeakedRun, tmp_path: Path, attack: str
) -> None:
    change, which, code_ = ATTACKS[attack]
    path = plan(endpoint, tmp_path)
    change(endpoint, run)

    code, out, log = apply(endpoint, tmp_path, path)

    assert exists(endpoint, run)[which], broken(
        "left-alone", f"the {which} was deleted ({attack}): {out}"
    )
    skips = [s["code"] for e in log if e["event"] == "skipped" for s in e["skips"]]
    assert code_ in skips, f"expected skip {code_!r} ({attack}): {log}"
    assert code == 0, out

"""The AWS adapter through real boto3 against moto in server mode on 127.0.0.1."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from aws_helpers import AMI, FAKE_KEYS, ec2, session
from cloudguard_aws.adapter import AwsAdapter

from cloudguard.audit.inventory_files import parse_inventory
from cloudguard.cloud.records import SweepRequest


def launch(endpoint: str, region: str, tags: dict[str, str], count: int = 1) -> list[str]:
    spec = [{"ResourceType": "instance", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}]
    answer = ec2(endpoint, region).run_instances(
        ImageId=AMI,
        MinCount=count,
        MaxCount=count,
        InstanceType="m5.xlarge",
        TagSpecifications=spec if tags else [],
    )
    return [i["InstanceId"] for i in answer["Instances"]]


def sweep(endpoint: str, **options: Any) -> Any:
    """One region's sweep, of instances alone (`--kind vm`) unless `kinds` says otherwise."""
    defaults = {"regions": ("us-east-1",), "kinds": ("vm",)}
    request = SweepRequest(endpoint=endpoint, credential="fake", **{**defaults, **options})
    return AwsAdapter(session_factory=session).sweep(request)


def test_instances_are_normalised_with_tags_state_size_and_account(endpoint: str) -> None:
    (orphan,) = launch(endpoint, "us-east-1", {"task-id": "cloud-noenv-c7", "Name": "wkr-01"})
    launch(endpoint, "us-east-1", {})
    (stopped,) = launch(endpoint, "us-east-1", {"task-id": "task-1"})
    ec2(endpoint).stop_instances(InstanceIds=[stopped])

    result = sweep(endpoint)

    assert result.failures == ()
    by_id = {r.id: r for r in result.resources}
    assert len(by_id) == 3  # untagged instances are listed too: the engine counts them
    found = by_id[orphan]
    assert (found.provider, found.region, found.kind, found.size) == (
        "aws",
        "us-east-1",
        "vm",
        "m5.xlarge",
    )
    assert found.name == "wkr-01" and found.tag("task-id") == "cloud-noenv-c7"
    assert found.power_state == "running" and found.account == "123456789012"
    assert by_id[stopped].power_state == "stopped"


def test_terminated_instances_are_not_swept(endpoint: str) -> None:
    (gone,) = launch(endpoint, "us-east-1", {"task-id": "t"})
    ec2(endpoint).terminate_instances(InstanceIds=[gone])

    assert [r.id for r in sweep(endpoint).resources] == []


def test_many_pages_are_followed(endpoint: str) -> None:
    launch(endpoint, "us-east-1", {"task-id": "t"}, count=30)
    launch(endpoint, "us-east-1", {"task-id": "u"}, count=30)

    assert len(sweep(endpoint).resources) == 60


def test_every_enabled_region_is_swept_when_none_is_named(endpoint: str) -> None:
    launch(endpoint, "eu-west-1", {"task-id": "t"})
    launch(endpoint, "us-west-2", {"task-id": "u"})

    result = AwsAdapter(session_factory=session).sweep(
        SweepRequest(endpoint=endpoint, credential="fake", concurrency=8, kinds=("vm",))
    )

    assert result.failures == ()
    assert sorted(r.region for r in result.resources) == ["eu-west-1", "us-west-2"]


def test_every_volume_is_reported_as_a_disk_with_its_size(endpoint: str) -> None:
    """A volume bills while it exists, attached or not (an untagged one is counted, not a
    finding): `--kind disk` lists them all, with the size that prices them."""
    client = ec2(endpoint)
    tagged = [{"ResourceType": "volume", "Tags": [{"Key": "task-id", "Value": "cloud-noenv-c7"}]}]
    kept = client.create_volume(
        AvailabilityZone="us-east-1a", Size=64, VolumeType="gp3", TagSpecifications=tagged
    )
    other = client.create_volume(AvailabilityZone="us-east-1a", Size=8)

    disks = {r.id: r for r in sweep(endpoint, kinds=("disk",)).resources}

    assert set(disks) == {kept["VolumeId"], other["VolumeId"]}
    disk = disks[kept["VolumeId"]]
    assert disk.kind == "disk" and disk.size == "gp3 64 GiB"
    assert disk.tag("task-id") == "cloud-noenv-c7"


def test_live_and_offline_paths_give_the_same_records(endpoint: str) -> None:
    launch(
        endpoint, "us-east-1", {"task-id": "cloud-noenv-c7", "repository-generation": "deadbeef"}
    )
    document = ec2(endpoint).describe_instances()
    printed = [  # what `aws ec2 describe-instances` prints: times as text
        {
            **r,
            "Instances": [{**i, "LaunchTime": i["LaunchTime"].isoformat()} for i in r["Instances"]],
        }
        for r in document["Reservations"]
    ]
    offline = parse_inventory({"Reservations": printed}, source="file")

    (live,) = sweep(endpoint).resources

    assert [(r.id, r.power_state, r.created, dict(r.tags)) for r in offline] == [
        (live.id, live.power_state, live.created, dict(live.tags))
    ]


def test_an_unreachable_region_is_a_named_failure_and_the_others_still_report(
    endpoint: str,
) -> None:
    launch(endpoint, "us-east-1", {"task-id": "t"})

    def flaky(request: SweepRequest) -> Any:
        return boto3.Session(region_name="us-east-1", **FAKE_KEYS)

    adapter = AwsAdapter(session_factory=flaky)
    good = adapter.sweep(
        SweepRequest(endpoint=endpoint, credential="fake", regions=("us-east-1",), kinds=("vm",))
    )
    bad = adapter.sweep(  # no retries: a refused connection is the same failure sooner
        SweepRequest(
            endpoint="http://127.0.0.1:9", credential="fake", regions=("us-east-1",), retries=0
        )
    )

    assert len(good.resources) == 1 and good.failures == ()
    (failure,) = bad.failures
    assert failure.source == "aws account" and "127.0.0.1:9" in failure.reason


def test_missing_credentials_name_the_chain_tried(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    for name in list(__import__("os").environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # never probe 169.254.169.254

    result = AwsAdapter().sweep(SweepRequest(regions=("us-east-1",)))

    (failure,) = result.failures
    assert failure.source == "aws credentials"
    assert "no AWS credentials found; tried: environment variables" in failure.reason
    assert "instance metadata" in failure.reason

"""Every kind a run leaks on AWS, through the CLI: boto3 against moto in server mode
(DescribeInstances, DescribeVolumes, DescribeAddresses and the Resource Groups Tagging API),
and the same from an `aws resourcegroupstaggingapi get-resources` export."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from aws_helpers import FAKE_KEYS, moto_profile
from aws_leaked_run import RUN, AwsLeakedRun, leaked_run
from test_aws_reaper import cli


@pytest.fixture
def run(endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AwsLeakedRun:
    monkeypatch.chdir(tmp_path)
    moto_profile(tmp_path, monkeypatch)
    return leaked_run(endpoint)


def audit(*args: str) -> tuple[int, dict[str, Any]]:
    done = cli("audit", "--leaked-by", f"ci-run={RUN}", "--format", "json", *args)
    return done.exit_code, json.loads(done.stdout)


def live(endpoint: str) -> list[str]:
    return ["--provider", "aws", "--region", "us-east-1", "--credential", "fake",
            "--management-endpoint", endpoint]  # fmt: skip


def test_leaked_by_finds_everything_the_run_left_whole(endpoint: str, run: AwsLeakedRun) -> None:
    code, report = audit(*live(endpoint))

    leaked = {f["resource"]["id"]: f["resource"]["kind"] for f in report["findings"]}
    assert leaked == run.kinds, f"missed {set(run.kinds) - set(leaked)}"
    assert {f["verdict"] for f in report["findings"]} == {"leaked"}
    assert code == 1


def test_billing_per_kind_on_aws(endpoint: str, run: AwsLeakedRun) -> None:
    _, report = audit(*live(endpoint))
    billable = {f["resource"]["id"]: f["billable"] for f in report["findings"]}

    assert billable[run.interface] is False and billable[run.group] is False
    assert billable[run.address] is True and billable[run.snapshot] is True
    assert billable[run.balancer] is True and billable[f"arn:aws:s3:::{run.bucket}"] is True


def test_kind_narrows_the_aws_sweep(endpoint: str, run: AwsLeakedRun) -> None:
    _, report = audit(*live(endpoint), "--kind", "snapshot", "--kind", "bucket")

    assert {f["resource"]["kind"] for f in report["findings"]} == {"snapshot", "bucket"}


def test_a_get_resources_export_finds_the_tagged_kinds_offline(
    endpoint: str, run: AwsLeakedRun, tmp_path: Path
) -> None:
    tagging = boto3.client(
        "resourcegroupstaggingapi", endpoint_url=endpoint, region_name="us-east-1", **FAKE_KEYS
    )
    export = tmp_path / "tagged.json"
    answer = tagging.get_resources(ResourcesPerPage=100)
    export.write_text(json.dumps({"ResourceTagMappingList": answer["ResourceTagMappingList"],
                                  "PaginationToken": ""}))  # fmt: skip

    code, report = audit("--inventory", str(export))

    found = {f["resource"]["id"]: f["resource"]["kind"] for f in report["findings"]}
    # moto's Tagging API leaves Elastic IPs out (the live sweep reads them itself).
    assert found == {k: v for k, v in run.kinds.items() if k != run.address}
    assert code == 1

"""What an S3 bucket holds, in the plan (issue 32: "holds data: N objects where the cloud
says"): the sweep reads one ListObjectsV2 page (MaxKeys 1000) of each tagged bucket, and the
plan's line for the bucket says how many objects, or "at least" that many past one page."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import cloudguard_aws.adapter
import pytest
from aws_helpers import FAKE_KEYS, reap_workspace
from aws_leaked_run import AwsLeakedRun, leaked_run
from named_checks import broken
from test_aws_reap_kinds import plan

ACCOUNT = "123456789012"


@pytest.fixture
def run(endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AwsLeakedRun:
    reap_workspace(tmp_path, monkeypatch, ACCOUNT)
    found = leaked_run(endpoint)
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", **FAKE_KEYS)
    for key in ("a", "b", "c"):
        s3.put_object(Bucket=found.bucket, Key=key, Body=b"data")
    return found


def _bucket_line(path: Path) -> str:
    (bucket,) = json.loads(path.read_text())["not_planned"]
    return str(bucket["why"])


@pytest.mark.parametrize(("page", "said"), [(1000, "3 objects"), (2, "at least 2 objects")])
def test_the_plan_says_how_many_objects_a_bucket_holds(
    endpoint: str, run: AwsLeakedRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    page: int, said: str,
) -> None:  # fmt: skip
    monkeypatch.setattr(cloudguard_aws.adapter, "OBJECTS_READ", page)

    why = _bucket_line(plan(endpoint, tmp_path))

    assert f"it holds data ({said})" in why, broken(
        "the-plan-says-what-a-bucket-holds", f"the plan's line for the bucket: {why}"
    )
    assert "--force" not in why

"""What the AWS tests share: moto's fake credentials and clients pointed at its server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boto3
import pytest
from reap_workspace import reap_workspace as shared_reap_workspace

from cloudguard.cloud.records import SweepRequest

FAKE_KEYS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
AMI = "ami-12c6146b"  # one of moto's bundled images


def session(_request: SweepRequest) -> Any:
    """The adapters' session factory in tests: moto's keys, never the ambient chain."""
    return boto3.Session(region_name="us-east-1", **FAKE_KEYS)


def ec2(endpoint: str, region: str = "us-east-1") -> Any:
    return boto3.client("ec2", endpoint_url=endpoint, region_name=region, **FAKE_KEYS)


def moto_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `moto` profile of moto's keys, for `--credential moto`, in a file of the test's own."""
    credentials = tmp_path / "aws-credentials"
    credentials.write_text("[moto]\n" + "".join(f"{k} = {v}\n" for k, v in FAKE_KEYS.items()))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))


def reap_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, account: str = "123456789012"
) -> tuple[Path, Path]:
    """The shared reap workspace (tests/reap_workspace.py) for `account`, with the `moto`
    profile. Returns (the working directory, the controller home)."""
    moto_profile(tmp_path, monkeypatch)
    return shared_reap_workspace(tmp_path, monkeypatch, account)

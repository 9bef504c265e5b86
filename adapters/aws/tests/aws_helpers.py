"""What the AWS tests share: moto's fake credentials and clients pointed at its server."""

from __future__ import annotations

from typing import Any

import boto3

from cloudguard.cloud.records import SweepRequest

FAKE_KEYS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
AMI = "ami-12c6146b"  # one of moto's bundled images


def session(_request: SweepRequest) -> Any:
    """The adapters' session factory in tests: moto's keys, never the ambient chain."""
    return boto3.Session(region_name="us-east-1", **FAKE_KEYS)


def ec2(endpoint: str, region: str = "us-east-1") -> Any:
    return boto3.client("ec2", endpoint_url=endpoint, region_name=region, **FAKE_KEYS)

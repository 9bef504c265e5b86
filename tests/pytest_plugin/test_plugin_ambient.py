"""Ambient credentials cannot hide a reach, and SDK retries cannot multiply one.

The seal drops the shell's credentials and sets sentinel ones (docs/guard.md),
so an SDK call that relied on the ambient identity goes on to the connection,
where it is recorded by service and operation and refused. Without the
sentinels botocore raises NoCredentialsError before any request: the
swallowing test would pass with nothing recorded (the control, without the
sentinels: tests/pytest_plugin/test_plugin_negative_controls.py).
"""

from __future__ import annotations

from inner_runs import run_inner
from named_checks import broken

from cloudguard.guard.seal import SENTINELS

AMBIENT = {
    "AWS_ACCESS_KEY_ID": "AKIAAMBIENTSHELL0001",
    "AWS_SECRET_ACCESS_KEY": "ambient-shell-secret-0002",
    "AZURE_CLIENT_ID": "ambient-client-0003",
    "AZURE_TENANT_ID": "ambient-tenant-0004",
    "AZURE_CLIENT_SECRET": "ambient-azure-secret-0005",
}
EARLY_CLIENT = """
import boto3
# Made while the shell's credentials are still in the environment, before the plugin seals.
CLIENT = boto3.session.Session().client("s3", region_name="us-east-1")
"""
S3 = ("botocore reached `s3.amazonaws.com`", "operation: s3 ListBuckets")
RED = {
    "test_boto3_client_on_ambient_credentials": S3,
    "test_boto3_resource_on_ambient_credentials": S3,
    "test_boto3_client_made_before_the_plugin": S3,
    # DefaultAzureCredential probes instance metadata for the ARM call it serves.
    "test_azure_default_credential": ("for Microsoft.Compute GET virtualMachines",),
}


def run_ambient(fenced, monkeypatch, *args):
    for name, value in AMBIENT.items():
        monkeypatch.setenv(name, value)
    return run_inner(fenced, "ambient", "--cloudguard", *args, early=EARLY_CLIENT)


def test_a_call_on_ambient_credentials_is_recorded_naming_its_operation(fenced, monkeypatch):
    run = run_ambient(fenced, monkeypatch)

    unseen = {
        f"{name} is red naming its reach": run.verdicts[name].text
        for name, named in RED.items()
        if run.verdicts[name].outcome != "failed"
        or not all(text in run.verdicts[name].text for text in named)
    }
    assert not unseen, broken(list(unseen), "\n".join(f"{k}: {v}" for k, v in unseen.items()))
    green = {n: v.outcome for n, v in run.verdicts.items() if n not in RED}
    assert set(green.values()) == {"passed"}, {n: run.verdicts[n].text for n in green}
    assert len(green) == 6  # NoCredentialsError on purpose, three boto3 retry modes, two Azure
    leaked = [value for value in AMBIENT.values() if value in run.output]
    assert leaked == []


def test_the_sentinels_are_documented_fakes():
    assert SENTINELS["AWS_ACCESS_KEY_ID"] == "cloudguard-sentinel-not-a-credential"
    assert set(SENTINELS) == {
        "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION"
    }  # fmt: skip

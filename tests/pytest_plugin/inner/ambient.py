# ruff: noqa: SIM105  (try/except/pass is the point: code under test that swallows the failure)
"""Inner suite: ambient credentials cannot hide a reach; retries cannot multiply one.

Run under a shell that exports AWS and Azure credentials, which the seal
drops. A call that relied on them must still be recorded and fail its test,
naming its service and operation; the SDKs' default retry settings must not
turn one refused call into several records.
"""

import asyncio
import socket
import time

import boto3
import cloudguard_early_control  # made a boto3 client before the plugin sealed anything
import pytest
from botocore.config import Config

SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"


def require_fence():
    assert getattr(socket, "cloudguard_test_fence", False), "test fence missing: not calling out"


def swallowed(call):
    require_fence()
    try:
        call()
    except Exception:
        pass


def test_boto3_client_on_ambient_credentials():
    swallowed(lambda: boto3.client("s3").list_buckets())


def test_boto3_resource_on_ambient_credentials():
    swallowed(lambda: list(boto3.resource("s3").buckets.all()))


def test_boto3_client_made_before_the_plugin():
    swallowed(cloudguard_early_control.CLIENT.list_buckets)


def test_azure_default_credential():
    from azure.identity import DefaultAzureCredential
    from azure.mgmt.compute import ComputeManagementClient

    client = ComputeManagementClient(DefaultAzureCredential(), SUBSCRIPTION)
    swallowed(lambda: list(client.virtual_machines.list_all()))


def test_no_credentials_on_purpose(monkeypatch):
    # The documented way: the test removes the seal's sentinel credentials itself.
    from botocore.exceptions import NoCredentialsError

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name)
    with pytest.raises(NoCredentialsError):
        # A new session: boto3's default one keeps the credentials it resolved before.
        boto3.session.Session().client("s3").list_buckets()


@pytest.mark.parametrize("mode", ["legacy", "standard", "adaptive"])
def test_boto3_default_retries_record_one_call_once(cloudguard, mode):
    swallowed(
        lambda: boto3.client("sts", config=Config(retries={"mode": mode})).get_caller_identity()
    )
    assert len(cloudguard.expect(via="botocore")) == 1


class FakeCredential:
    def get_token(self, *scopes, **kwargs):
        from azure.core.credentials import AccessToken

        return AccessToken("fake-token", int(time.time()) + 3600)

    async def aget_token(self, *scopes, **kwargs):
        return self.get_token(*scopes)


def test_azure_default_retry_policy_records_one_call_once(cloudguard):
    from azure.mgmt.compute import ComputeManagementClient

    client = ComputeManagementClient(FakeCredential(), SUBSCRIPTION)
    swallowed(lambda: list(client.virtual_machines.list_all()))
    assert len(cloudguard.expect(via="azure-core")) == 1


def test_azure_async_default_retry_policy_records_one_call_once(cloudguard):
    from azure.mgmt.compute.aio import ComputeManagementClient

    class AsyncCredential:
        async def get_token(self, *scopes, **kwargs):
            return FakeCredential().get_token(*scopes)

        async def close(self):
            pass

    async def names():
        async with ComputeManagementClient(AsyncCredential(), SUBSCRIPTION) as client:
            return [vm.name async for vm in client.virtual_machines.list_all()]

    swallowed(lambda: asyncio.run(names()))
    assert len(cloudguard.expect(via="azure-core")) == 1

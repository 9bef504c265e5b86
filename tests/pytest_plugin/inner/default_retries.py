# ruff: noqa: SIM105  (try/except/pass is the point: code under test that swallows the failure)
"""Inner suite (run by pytester): SDK calls with their DEFAULT retry settings swallow a reach.

No retry is configured away: botocore's default retry mode and attempts,
azure-core's default RetryPolicy. One logical call must still be one record
(a refusal the SDK retried would be recorded once per attempt). The fence
(tests/pytest_plugin/fence) keeps everything but loopback unreachable.
"""

import socket
import time


def require_fence():
    assert getattr(socket, "cloudguard_test_fence", False), "test fence missing: not calling out"


class FakeCredential:
    def get_token(self, *scopes, **kwargs):
        from azure.core.credentials import AccessToken

        return AccessToken("fake-token", int(time.time()) + 3600)


def test_boto3_default_retries():
    require_fence()
    import boto3

    client = boto3.client(
        "ec2", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="t"
    )
    try:
        client.describe_instances()
    except Exception:
        pass


def test_azure_default_retries():
    require_fence()
    from azure.mgmt.compute import ComputeManagementClient

    client = ComputeManagementClient(FakeCredential(), "00000000-0000-0000-0000-000000000000")
    try:
        list(client.virtual_machines.list_all())
    except Exception:
        pass

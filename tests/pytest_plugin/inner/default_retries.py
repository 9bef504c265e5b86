"""Inner suite (run by pytester): SDK calls with their DEFAULT retry settings swallow a reach.

No retry is configured away: botocore's default retry mode and attempts,
azure-core's default RetryPolicy. One logical call must still be one record
(a refusal the SDK retried would be recorded once per attempt). One call more
goes through a retry policy that retries whatever its transport raised, as a
team's own policy may: the socket is reached again inside one call, and the
call is still one record. Each test writes what its caller caught to
`caught-<test>` (the refusal itself, never an SDK's wrapper of it). The fence
(tests/pytest_plugin/fence) keeps everything but loopback unreachable.
"""

import socket
import time
from pathlib import Path


def require_fence():
    assert getattr(socket, "cloudguard_test_fence", False), "test fence missing: not calling out"


def caught(test, error):
    Path(f"caught-{test}").write_text(type(error).__name__)


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
    except Exception as error:
        caught("test_boto3_default_retries", error)


def test_azure_default_retries():
    require_fence()
    from azure.mgmt.compute import ComputeManagementClient

    client = ComputeManagementClient(FakeCredential(), "00000000-0000-0000-0000-000000000000")
    try:
        list(client.virtual_machines.list_all())
    except Exception as error:
        caught("test_azure_default_retries", error)


def test_azure_policy_retrying_everything():
    require_fence()
    from azure.core.pipeline.policies import HTTPPolicy
    from azure.mgmt.compute import ComputeManagementClient

    class RetryEverything(HTTPPolicy):
        def send(self, request):
            for _ in range(2):
                try:
                    return self.next.send(request)
                except Exception:
                    pass
            return self.next.send(request)

    client = ComputeManagementClient(
        FakeCredential(), "00000000-0000-0000-0000-000000000000", retry_policy=RetryEverything()
    )
    try:
        list(client.virtual_machines.list_all())
    except Exception as error:
        caught("test_azure_policy_retrying_everything", error)

# ruff: noqa: SIM105  (try/except/pass is the point: code under test that swallows the failure)
"""Inner suite: a new team's first run, as issue 25 tried it.

Five tests reach a cloud the ways a team's tests do: boto3 unmocked (the
refusal raised), the Azure SDK with a credential chain that falls through
the `az` CLI (another exception raised), an `az` subprocess whose failure the
test asserts on, a socket to a cloud host, and boto3 swallowed. A moto test
beside them stays green. Every reach is behind the fence.
"""

import socket
import subprocess
import time

import boto3
from moto import mock_aws


def require_fence():
    assert getattr(socket, "cloudguard_test_fence", False), "test fence missing: not calling out"


@mock_aws
def test_moto_mocked():
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="hermetic")


def test_boto3_unmocked():
    require_fence()
    boto3.client("s3", region_name="us-east-1").list_buckets()


class FallingThroughTheCli:
    """A credential that asks `az`, as AzureCliCredential does, and gives up on its failure."""

    def get_token(self, *scopes, **kwargs):
        done = subprocess.run(
            ["az", "account", "get-access-token"], capture_output=True, text=True, timeout=30
        )
        if done.returncode:
            raise RuntimeError(f"az failed: {done.stderr}")
        from azure.core.credentials import AccessToken

        return AccessToken("never", int(time.time()) + 3600)


def test_azure_sdk_unmocked():
    require_fence()
    from azure.mgmt.compute import ComputeManagementClient

    client = ComputeManagementClient(FallingThroughTheCli(), "0000", retry_total=0)
    list(client.virtual_machines.list_all())


def test_az_subprocess():
    done = subprocess.run(["az", "vm", "list"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


def test_socket_to_a_cloud_host():
    require_fence()
    socket.create_connection(("management.azure.com", 443), timeout=1)


def test_boto3_swallowed():
    require_fence()
    try:
        boto3.client("sts", region_name="us-east-1").get_caller_identity()
    except Exception:
        pass


def test_interrupted_after_a_reach():
    # As if the person pressed Ctrl-C once the test had reached (pytest stops the session).
    require_fence()
    try:
        socket.getaddrinfo("sts.amazonaws.com", 443)
    except Exception:
        pass
    raise KeyboardInterrupt

# ruff: noqa: SIM105  (try/except/pass is the point: code under test that swallows the failure)
"""Inner suite: the fixture, xfail, teardown and async paths, credential fetches."""

import asyncio
import socket
import time

import pytest

from cloudguard.guard.inprocess import CloudReachRefused


def require_fence():
    assert getattr(socket, "cloudguard_test_fence", False), "test fence missing: not calling out"


def reach_metadata():
    require_fence()
    sock = socket.socket()
    try:
        sock.connect(("169.254.169.254", 80))
    except CloudReachRefused:
        pass
    finally:
        sock.close()


def reach_s3_name():
    require_fence()
    try:
        socket.getaddrinfo("s3.amazonaws.com", 443)
    except CloudReachRefused:
        pass


def test_expect_declares(cloudguard):
    assert cloudguard.reaches == ()
    reach_metadata()
    [record] = cloudguard.expect(via="socket", target="169.254.169.254:80")
    assert record["test"].endswith("::test_expect_declares")
    assert len(cloudguard.reaches) == 1


def test_expect_is_narrow(cloudguard):
    reach_metadata()
    reach_s3_name()
    cloudguard.expect(via="socket", target="169.254.169.254:80")


def test_expect_needs_a_record(cloudguard):
    with pytest.raises(AssertionError, match="expected a reach botocore"):
        cloudguard.expect(via="botocore")


@pytest.mark.xfail(reason="an xfail test that reaches must still fail")
def test_xfail_reach():
    reach_metadata()
    raise AssertionError("expected failure")


@pytest.fixture
def reaching_teardown():
    yield
    reach_s3_name()


def test_teardown_reach(reaching_teardown):
    pass


def test_unswallowed():
    require_fence()
    socket.create_connection(("metadata.google.internal", 80), timeout=0.5)


def test_async_azure_swallowed():
    require_fence()
    from azure.core.credentials import AccessToken
    from azure.mgmt.compute.aio import ComputeManagementClient

    class Credential:
        async def get_token(self, *scopes, **kwargs):
            return AccessToken("fake-token", int(time.time()) + 3600)

        async def close(self):
            pass

    async def call():
        async with ComputeManagementClient(Credential(), "sub", retry_total=0) as client:
            try:
                [vm async for vm in client.virtual_machines.list_all()]
            except Exception:
                pass

    asyncio.run(call())


def test_imds_credentials_swallowed():
    require_fence()
    from botocore.utils import InstanceMetadataFetcher

    # env={}: ignore the seal's AWS_EC2_METADATA_DISABLED, as a misconfigured suite would.
    fetcher = InstanceMetadataFetcher(timeout=0.5, num_attempts=1, env={})
    try:
        fetcher.retrieve_iam_role_credentials()
    except Exception:
        pass


def test_identity_token_swallowed():
    require_fence()
    from azure.identity import ManagedIdentityCredential

    try:
        ManagedIdentityCredential().get_token("https://management.azure.com/.default")
    except Exception:
        pass


# Each socket entry point the guard patches, called on its own and swallowed.
def test_connect_ex_swallowed():
    require_fence()
    sock = socket.socket()
    try:
        sock.connect_ex(("169.254.169.254", 80))
    except CloudReachRefused:
        pass
    finally:
        sock.close()


def test_gethostbyname_swallowed():
    require_fence()
    try:
        socket.gethostbyname("management.azure.com")
    except Exception:
        pass


def test_gethostbyname_ex_swallowed():
    require_fence()
    try:
        socket.gethostbyname_ex("sts.amazonaws.com")
    except Exception:
        pass


def test_clean_last():
    pass

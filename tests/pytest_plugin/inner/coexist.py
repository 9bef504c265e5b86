"""Inner suite: hermetic tests that must keep working under the plugin.

moto in process (@mock_aws) and in server mode on 127.0.0.1, and a fake Azure
endpoint over HTTPS on 127.0.0.1 (trustme) driven by the real
azure-mgmt-compute client, sync and async.
"""

import asyncio
import json
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
import pytest
import trustme
from moto import mock_aws
from moto.server import ThreadedMotoServer

SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"


class FakeCredential:
    def get_token(self, *scopes, **kwargs):
        from azure.core.credentials import AccessToken

        return AccessToken("fake-token", int(time.time()) + 3600)


class AsyncFakeCredential(FakeCredential):
    async def get_token(self, *scopes, **kwargs):
        return FakeCredential.get_token(self, *scopes, **kwargs)

    async def close(self):
        pass

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        pass


def boto3_kwargs(**extra):
    return dict(
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        **extra,
    )


@mock_aws
def test_moto_decorator():
    s3 = boto3.client("s3", **boto3_kwargs())
    s3.create_bucket(Bucket="hermetic")
    assert [b["Name"] for b in s3.list_buckets()["Buckets"]] == ["hermetic"]


@pytest.fixture(scope="module")
def moto_server():
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def test_moto_server_mode(moto_server):
    s3 = boto3.client("s3", endpoint_url=moto_server, **boto3_kwargs())
    s3.create_bucket(Bucket="served")
    assert "served" in [b["Name"] for b in s3.list_buckets()["Buckets"]]


class FakeArm(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"value": [{"name": "vm-local", "location": "westeurope"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def fake_arm(tmp_path_factory):
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    cert.configure_cert(context)
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeArm)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    ca_file = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    yield f"https://127.0.0.1:{server.server_address[1]}", str(ca_file)
    server.shutdown()


def test_fake_azure_sync(fake_arm):
    from azure.mgmt.compute import ComputeManagementClient

    url, ca_file = fake_arm
    client = ComputeManagementClient(
        FakeCredential(), SUBSCRIPTION, base_url=url, connection_verify=ca_file
    )
    assert [vm.name for vm in client.virtual_machines.list_all()] == ["vm-local"]


def test_fake_azure_async(fake_arm):
    from azure.mgmt.compute.aio import ComputeManagementClient

    url, ca_file = fake_arm

    async def names():
        async with ComputeManagementClient(
            AsyncFakeCredential(), SUBSCRIPTION, base_url=url, connection_verify=ca_file
        ) as client:
            return [vm.name async for vm in client.virtual_machines.list_all()]

    assert asyncio.run(names()) == ["vm-local"]


def test_guards_were_installed():
    import socket

    from cloudguard.guard import inprocess
    from cloudguard.guard.inprocess import patches

    assert inprocess.installed() == {"botocore", "azure-core", "google-auth", "grpc", "socket"}
    assert patches.is_guarded(socket.socket, "connect")
    assert patches.is_guarded(socket, "getaddrinfo")
    from botocore.httpsession import URLLib3Session

    assert patches.is_guarded(URLLib3Session, "send")

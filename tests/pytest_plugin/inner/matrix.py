# ruff: noqa: SIM105  (try/except/pass is the point: code under test that swallows the failure)
"""Inner suite (run by pytester): the mocking tools teams use, each with its unmocked twin.

Every `test_mocked_*` is a correctly mocked test: the tool answers above the
socket, nothing leaves, and it must be green under --cloudguard. Every
`test_twin_*` makes the same call without the mock and swallows the failure:
it must be red, naming its reach. The fence (tests/pytest_plugin/fence) is
beneath everything, so even with a guard broken nothing but loopback is
reachable.
"""

import asyncio
import http.server
import json
import re
import socket
import threading
import time
from pathlib import Path
from unittest import mock

import boto3
import httpx
import pytest

SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
ARM = "https://management.azure.com"
ARM_VMS = re.compile(r"https://management\.azure\.com/subscriptions/.*/virtualMachines.*")
VM_PAGE = {"value": [{"name": "vm-replayed", "location": "westeurope"}]}
STS_XML = (
    '<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">'
    "<GetCallerIdentityResult><Arn>arn:aws:iam::123456789012:user/replayed</Arn>"
    "<UserId>AIDAREPLAYED</UserId><Account>123456789012</Account></GetCallerIdentityResult>"
    "<ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></GetCallerIdentityResponse>"
)


GCS = "https://storage.googleapis.com/storage/v1/b"
TOKEN_URI = "https://oauth2.googleapis.com/token"
BUCKET = {"kind": "storage#bucket", "name": "replayed", "id": "replayed"}


def require_fence():
    # Never make a reaching call unless the offline fence is beneath it.
    assert getattr(socket, "cloudguard_test_fence", False), "test fence missing: not calling out"


class FakeCredential:
    def get_token(self, *scopes, **kwargs):
        from azure.core.credentials import AccessToken

        return AccessToken("fake-token", int(time.time()) + 3600)


class AsyncFakeCredential:
    async def get_token(self, *scopes, **kwargs):
        return FakeCredential().get_token(*scopes)

    async def close(self):
        pass


def sts():
    return boto3.client(
        "sts", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="t"
    )


# No retries: without the plugin a twin's call fails at the fence, and azure-core's default
# backoff would wait ~5 s each for nothing. The SDKs' default retries under the guard have
# their own suite (tests/pytest_plugin/test_plugin_default_retries.py).
def vm_names():
    from azure.mgmt.compute import ComputeManagementClient

    client = ComputeManagementClient(FakeCredential(), SUBSCRIPTION, retry_total=0)
    return [vm.name for vm in client.virtual_machines.list_all()]


def vm_names_async():
    from azure.mgmt.compute.aio import ComputeManagementClient

    async def names():
        async with ComputeManagementClient(
            AsyncFakeCredential(), SUBSCRIPTION, retry_total=0
        ) as client:
            return [vm.name async for vm in client.virtual_machines.list_all()]

    return asyncio.run(names())


def anonymous_storage(**options):
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    return storage.Client(project="p", credentials=AnonymousCredentials(), **options)


def refreshing_storage():
    """A client on user credentials whose first call refreshes its token at Google's endpoint."""
    from google.cloud import storage
    from google.oauth2.credentials import Credentials

    credentials = Credentials(
        None, refresh_token="fake", client_id="c", client_secret="s", token_uri=TOKEN_URI
    )
    return storage.Client(project="p", credentials=credentials)


class FakeStorage(http.server.BaseHTTPRequestHandler):
    """An emulator-style fake on 127.0.0.1: every bucket exists."""

    def do_GET(self):
        name = self.path.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
        body = json.dumps({**BUCKET, "name": name, "id": name}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_storage():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeStorage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def swallowed(call):
    require_fence()
    try:
        call()
    except Exception:
        pass  # the hazard: code under test that swallows the failure


# -- cassettes (vcrpy and pytest-recording replay them; record_mode none: nothing may leave) --

CASSETTES = Path(__file__).parent / "cassettes" / Path(__file__).stem


def _cassette(name, method, uri, body, content_type):
    CASSETTES.mkdir(parents=True, exist_ok=True)
    interaction = {
        "request": {"body": None, "headers": {}, "method": method, "uri": uri},
        "response": {
            "body": {"string": body},
            "headers": {"Content-Type": [content_type]},
            "status": {"code": 200, "message": "OK"},
        },
    }
    # JSON is YAML: vcrpy reads it with its YAML serializer.
    text = json.dumps({"interactions": [interaction], "version": 1})
    (CASSETTES / f"{name}.yaml").write_text(text)
    return str(CASSETTES / f"{name}.yaml")


STS_CASSETTE = _cassette(
    "test_mocked_pytest_recording_boto3", "POST", "https://sts.us-east-1.amazonaws.com/",
    STS_XML, "text/xml",
)  # fmt: skip
ARM_CASSETTE = _cassette(
    "test_mocked_pytest_recording_azure", "GET",
    f"{ARM}/subscriptions/{SUBSCRIPTION}/providers/Microsoft.Compute/virtualMachines",
    json.dumps(VM_PAGE), "application/json",
)  # fmt: skip
MATCH = ["method", "scheme", "host", "path"]  # the api-version query follows the SDK's release


@pytest.fixture(scope="module")
def vcr_config():
    return {"record_mode": "none", "match_on": MATCH}


@pytest.fixture(scope="module")
def vcr_cassette_dir():
    return str(CASSETTES)


# -- boto3 ------------------------------------------------------------------------------------


def test_mocked_moto_decorator():
    from moto import mock_aws

    with mock_aws():
        assert sts().get_caller_identity()["Account"] == "123456789012"


def test_twin_moto_decorator():
    swallowed(lambda: sts().get_caller_identity())


def test_mocked_moto_server():
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        client = boto3.client(
            "sts", endpoint_url=f"http://{host}:{port}", region_name="us-east-1",
            aws_access_key_id="testing", aws_secret_access_key="t",
        )  # fmt: skip
        assert client.get_caller_identity()["Account"]
    finally:
        server.stop()


def test_twin_moto_server():
    swallowed(lambda: sts().get_caller_identity())


def test_mocked_botocore_stubber():
    from botocore.stub import Stubber

    client = sts()
    with Stubber(client) as stubber:
        stubber.add_response(
            "get_caller_identity",
            {
                "Account": "111122223333",
                "Arn": "arn:aws:iam::111122223333:user/stub",
                "UserId": "u",
            },
        )
        assert client.get_caller_identity()["Account"] == "111122223333"


def test_twin_botocore_stubber():
    swallowed(lambda: sts().get_caller_identity())


def test_mocked_placebo_recording(tmp_path):
    import placebo

    # A recording as placebo writes it: one JSON file per response, by service and operation.
    recorded = {"status_code": 200, "data": {"Account": "444455556666", "Arn": "a", "UserId": "u"}}
    (tmp_path / "sts.GetCallerIdentity_1.json").write_text(json.dumps(recorded))
    session = boto3.Session(
        region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="t"
    )
    pill = placebo.attach(session, data_path=str(tmp_path))
    pill.playback()
    assert session.client("sts").get_caller_identity()["Account"] == "444455556666"


def test_twin_placebo_recording():
    swallowed(lambda: sts().get_caller_identity())


def test_mocked_unittest_mock():
    answer = {"Account": "777788889999", "Arn": "a", "UserId": "u"}
    with mock.patch("botocore.client.BaseClient._make_api_call", return_value=answer) as call:
        assert sts().get_caller_identity()["Account"] == "777788889999"
    call.assert_called_once_with("GetCallerIdentity", {})


def test_twin_unittest_mock():
    swallowed(lambda: sts().get_caller_identity())


def test_mocked_vcrpy_boto3():
    import vcr

    with vcr.use_cassette(STS_CASSETTE, record_mode="none", match_on=MATCH):
        assert sts().get_caller_identity()["Arn"].endswith("user/replayed")


def test_twin_vcrpy_boto3():
    swallowed(lambda: sts().get_caller_identity())


@pytest.mark.vcr
def test_mocked_pytest_recording_boto3():
    assert sts().get_caller_identity()["Arn"].endswith("user/replayed")


def test_twin_pytest_recording_boto3():
    swallowed(lambda: sts().get_caller_identity())


# -- the Azure SDK ----------------------------------------------------------------------------


def test_mocked_responses_azure():
    import responses

    with responses.RequestsMock() as served:
        served.add(responses.GET, ARM_VMS, json=VM_PAGE)
        assert vm_names() == ["vm-replayed"]


def test_twin_responses_azure():
    swallowed(vm_names)


def test_mocked_requests_mock_azure():
    import requests_mock

    with requests_mock.Mocker() as served:
        served.get(ARM_VMS, json=VM_PAGE)
        assert vm_names() == ["vm-replayed"]


def test_twin_requests_mock_azure():
    swallowed(vm_names)


def test_mocked_vcrpy_azure():
    import vcr

    with vcr.use_cassette(ARM_CASSETTE, record_mode="none", match_on=MATCH):
        assert vm_names() == ["vm-replayed"]


def test_twin_vcrpy_azure():
    swallowed(vm_names)


@pytest.mark.vcr
def test_mocked_pytest_recording_azure():
    assert vm_names() == ["vm-replayed"]


def test_twin_pytest_recording_azure():
    swallowed(vm_names)


def test_mocked_aioresponses_azure_async():
    from aioresponses import aioresponses

    with aioresponses() as served:
        served.get(ARM_VMS, payload=VM_PAGE)
        assert vm_names_async() == ["vm-replayed"]


def test_twin_aioresponses_azure_async():
    swallowed(vm_names_async)


# -- Google Cloud (google-auth, google-cloud-storage) ---------------------------------------


def test_mocked_responses_google():
    import responses

    with responses.RequestsMock() as served:
        served.add(responses.POST, TOKEN_URI, json={"access_token": "t", "expires_in": 3600})
        served.add(responses.GET, f"{GCS}/replayed", json=BUCKET)
        assert refreshing_storage().get_bucket("replayed", retry=None).name == "replayed"


def test_twin_responses_google():
    swallowed(lambda: refreshing_storage().get_bucket("replayed", retry=None))


def test_mocked_requests_mock_google():
    import requests_mock

    with requests_mock.Mocker() as served:
        served.get(re.compile(re.escape(GCS) + "/replayed"), json=BUCKET)
        assert anonymous_storage().get_bucket("replayed", retry=None).name == "replayed"


def test_twin_requests_mock_google():
    swallowed(lambda: anonymous_storage().get_bucket("replayed", retry=None))


def test_mocked_google_auth_default():
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    found = (AnonymousCredentials(), "patched-project")
    with mock.patch("google.auth.default", return_value=found) as default:
        assert storage.Client().project == "patched-project"
    assert default.called


def test_twin_google_auth_default():
    from google.cloud import storage

    swallowed(storage.Client)  # application default credentials: the metadata server's ping


def test_mocked_anonymous_loopback(fake_storage):
    client = anonymous_storage(client_options={"api_endpoint": fake_storage})
    assert client.get_bucket("local", retry=None).name == "local"


def test_twin_anonymous_loopback():
    swallowed(lambda: anonymous_storage().get_bucket("local", retry=None))


def test_mocked_storage_emulator(fake_storage, monkeypatch):
    from google.cloud import storage

    monkeypatch.setenv("STORAGE_EMULATOR_HOST", fake_storage)
    assert storage.Client().get_bucket("emulated", retry=None).name == "emulated"


def test_twin_storage_emulator():
    swallowed(lambda: anonymous_storage().get_bucket("emulated", retry=None))


# -- httpx ------------------------------------------------------------------------------------


def test_mocked_respx():
    import respx

    with respx.mock:
        respx.get(f"{ARM}/health").respond(200, json={"ok": True})
        assert httpx.get(f"{ARM}/health").json() == {"ok": True}


def test_twin_respx():
    swallowed(lambda: httpx.get(f"{ARM}/health"))


def test_mocked_pytest_httpx(httpx_mock):
    httpx_mock.add_response(url=f"{ARM}/health", json={"ok": True})
    assert httpx.get(f"{ARM}/health").json() == {"ok": True}


def test_twin_pytest_httpx():
    swallowed(lambda: httpx.get(f"{ARM}/health"))

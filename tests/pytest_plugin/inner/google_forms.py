# ruff: noqa: SIM105  (try/except/pass is the point: code under test that swallows the failure)
"""Inner suite (run by pytester in a loopback-only network namespace): a suite trying to slip a
Google reach past the guards, each form as a `test_twin_*` that swallows its failure (must be red
naming its reach), and each allowed form as a `test_mocked_*` (loopback, a unix socket, an
interceptor that answers: must be green).

grpcio's C-core opens its own sockets and reads its own files (an xDS bootstrap), so this suite
runs only inside `unshare -rn`, where nothing but loopback exists, and refuses to make a reaching
call anywhere else. `early_channels` (loaded with `-p`, before cloudguard seals the session and
installs its guards) makes a channel of each kind first; `conftest.py` makes them again while it
is imported.
"""

import asyncio
import json
import os
import socket
import subprocess
import sys
import sysconfig
import tempfile
from concurrent import futures

import grpc
import grpc.aio
import pytest

TOPICS = "/google.pubsub.v1.Publisher/ListTopics"
PUBSUB = "pubsub.googleapis.com:443"
GOOGLE_IP = "142.250.1.95:443"  # an address of Google's, as a suite that pre-resolved would hold
GOOGLE_IP6 = "[2607:f8b0:4004:c1b::5f]:443"
TOKEN_URI = "https://oauth2.googleapis.com/token"
GCS = "https://storage.googleapis.com/storage/v1/b"
METADATA_TOKEN = "http://169.254.169.254/computeMetadata/v1/instance/service-accounts/default/token"
# A grpc call to Google in a Python child, as a test's subprocess would make it.
CHILD = (
    "import grpc\n"
    "channel = grpc.secure_channel('pubsub.googleapis.com:443', grpc.ssl_channel_credentials())\n"
    "try:\n"
    "    channel.unary_unary('/google.pubsub.v1.Publisher/ListTopics')(b'', timeout=3)\n"
    "except Exception as error:\n"
    "    print('swallowed', type(error).__name__)\n"
)


def require_netns():
    # Never make a reaching call unless only loopback exists beneath it.
    interfaces = {name for _, name in socket.if_nameindex()}
    assert interfaces == {"lo"}, f"not in a loopback-only namespace ({interfaces}): not calling"


def swallowed(call):
    require_netns()
    try:
        call()
    except Exception:
        pass  # the hazard: code under test that swallows the failure


def call(channel, timeout=3):
    with channel:
        return channel.unary_unary(TOPICS)(b"", timeout=timeout)


def secure(target, *options):
    return grpc.secure_channel(target, grpc.ssl_channel_credentials(), options=options)


def aio_call(make):
    async def topics():
        async with make() as channel:
            return await channel.unary_unary(TOPICS)(b"", timeout=3)

    return asyncio.run(topics())


def serve(address):
    handler = grpc.method_handlers_generic_handler(
        "google.pubsub.v1.Publisher",
        {"ListTopics": grpc.unary_unary_rpc_method_handler(lambda request, context: b"topics")},
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2), handlers=(handler,))
    port = server.add_insecure_port(address)
    server.start()
    return server, port


@pytest.fixture
def loopback_server():
    server, port = serve("127.0.0.1:0")
    yield f"127.0.0.1:{port}"
    server.stop(None)


# -- gRPC targets ------------------------------------------------------------------------------


def test_mocked_unix_socket():
    path = os.path.join(tempfile.mkdtemp(dir="/tmp"), "emulator.sock")  # a socket's path is short
    server, _ = serve(f"unix:{path}")
    try:
        assert call(grpc.insecure_channel(f"unix:{path}")) == b"topics"
    finally:
        server.stop(None)


def test_mocked_unix_abstract_socket():
    name = f"unix-abstract:cloudguard-emulator-{os.getpid()}"
    server, _ = serve(name)
    try:
        assert call(grpc.insecure_channel(name)) == b"topics"
    finally:
        server.stop(None)


def test_mocked_ipv6_loopback():
    server, port = serve("[::1]:0")
    try:
        assert call(grpc.insecure_channel(f"ipv6:[::1]:{port}")) == b"topics"
    finally:
        server.stop(None)


def test_mocked_loopback_with_google_authority(loopback_server):
    # A fake on loopback spoken to as if it were Google (the authority a client library sets).
    options = (("grpc.default_authority", "pubsub.googleapis.com"),)
    channel = grpc.insecure_channel(f"ipv4:{loopback_server}", options=options)
    assert call(channel) == b"topics"


def test_twin_ipv6_mapped_metadata():
    # The metadata server's address spelt as IPv6 (IPv4-mapped): the same address.
    swallowed(lambda: call(grpc.insecure_channel("ipv6:[::ffff:169.254.169.254]:80")))


def test_twin_xds_google_name():
    swallowed(lambda: call(secure("xds:///pubsub.googleapis.com")))


def test_twin_xds_bootstrap_server(monkeypatch):
    # The target names no cloud; the xDS bootstrap the C-core reads names Traffic Director.
    bootstrap = {
        "xds_servers": [
            {
                "server_uri": "trafficdirector.googleapis.com:443",
                "channel_creds": [{"type": "google_default"}],
                "server_features": ["xds_v3"],
            }
        ],
        "node": {"id": "cloudguard-test"},
    }
    monkeypatch.setenv("GRPC_XDS_BOOTSTRAP_CONFIG", json.dumps(bootstrap))
    swallowed(lambda: call(secure("xds:///pubsub-backend.internal")))


def test_twin_dns_public_resolver():
    swallowed(lambda: call(secure("dns://8.8.8.8/pubsub.googleapis.com:443")))


def test_twin_dns_metadata_resolver():
    # The metadata server answers DNS too: a resolver authority at it reaches it.
    swallowed(lambda: call(secure("dns://169.254.169.254/pubsub-backend.internal:443")))


def test_twin_c2p_internal_name():
    # google-c2p asks the metadata server where it runs, whatever host the target names.
    swallowed(lambda: call(secure("google-c2p:///pubsub-backend.internal")))


def test_twin_preresolved_ssl_target_name_override():
    override = ("grpc.ssl_target_name_override", "pubsub.googleapis.com")
    swallowed(lambda: call(secure(f"ipv4:{GOOGLE_IP}", override)))


def test_twin_preresolved_default_authority():
    authority = ("grpc.default_authority", "pubsub.googleapis.com")
    swallowed(lambda: call(secure(f"ipv6:{GOOGLE_IP6}", authority)))


def test_twin_insecure_channel():
    swallowed(lambda: call(grpc.insecure_channel(PUBSUB)))


def test_twin_aio_insecure_channel():
    swallowed(lambda: aio_call(lambda: grpc.aio.insecure_channel(PUBSUB)))


def test_twin_aio_preresolved_authority():
    options = (("grpc.ssl_target_name_override", "pubsub.googleapis.com"),)
    make = lambda: grpc.aio.secure_channel(  # noqa: E731
        f"ipv4:{GOOGLE_IP}", grpc.ssl_channel_credentials(), options=options
    )
    swallowed(lambda: aio_call(make))


class Passthrough(grpc.UnaryUnaryClientInterceptor):
    def intercept_unary_unary(self, continuation, details, request):
        return continuation(details, request)


class Answering(grpc.UnaryUnaryClientInterceptor):
    """A test's interceptor that answers itself: the channel below is never called."""

    def intercept_unary_unary(self, continuation, details, request):
        answered = futures.Future()
        answered.set_result(b"intercepted")
        return answered  # what grpc asks of the interceptor's outcome: its result()


def test_mocked_intercept_channel_answers():
    channel = grpc.intercept_channel(secure(PUBSUB), Answering())
    assert channel.unary_unary(TOPICS)(b"") == b"intercepted"


def test_twin_intercept_channel():
    swallowed(lambda: call(grpc.intercept_channel(secure(PUBSUB), Passthrough())))


class AioPassthrough(grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation, details, request):
        return await continuation(details, request)


class AioAnswering(grpc.aio.UnaryUnaryClientInterceptor):
    """A test's aio interceptor that answers itself: no call is made below it."""

    async def intercept_unary_unary(self, continuation, details, request):
        return b"intercepted"


def aio_intercepted(interceptor):
    return lambda: grpc.aio.secure_channel(
        PUBSUB, grpc.ssl_channel_credentials(), interceptors=[interceptor]
    )


def test_mocked_aio_interceptor_answers():
    assert aio_call(aio_intercepted(AioAnswering())) == b"intercepted"


def test_twin_aio_interceptor():
    swallowed(lambda: aio_call(aio_intercepted(AioPassthrough())))


def test_twin_api_core_create_channel():
    from google.api_core import grpc_helpers
    from google.auth.credentials import AnonymousCredentials

    make = lambda: grpc_helpers.create_channel(PUBSUB, credentials=AnonymousCredentials())  # noqa: E731
    swallowed(lambda: call(make()))


def test_twin_early_sync_channel():
    import early_channels

    swallowed(lambda: early_channels.SYNC.unary_unary(TOPICS)(b"", timeout=3))


def test_twin_early_aio_channel():
    import early_channels

    loop = early_channels.LOOP
    swallowed(
        lambda: loop.run_until_complete(early_channels.AIO.unary_unary(TOPICS)(b"", timeout=3))
    )


def test_twin_early_authority_channel():
    import early_channels

    swallowed(lambda: early_channels.AUTHORITY.unary_unary(TOPICS)(b"", timeout=3))


def test_twin_early_authority_stub():
    import early_channels

    swallowed(lambda: early_channels.AUTHORITY_TOPICS(b"", timeout=3))


def test_twin_conftest_channels():
    import conftest

    swallowed(lambda: conftest.SYNC.unary_unary(TOPICS)(b"", timeout=3))
    loop = conftest.LOOP
    swallowed(lambda: loop.run_until_complete(conftest.AIO.unary_unary(TOPICS)(b"", timeout=3)))


def child(*flags):
    require_netns()
    code = CHILD
    if "-S" in flags:  # no site: the suite finds grpc itself
        code = f"import sys; sys.path.append({sysconfig.get_paths()['purelib']!r})\n" + code
    subprocess.run([sys.executable, *flags, "-c", code], timeout=60, check=False)


def test_twin_python_child():
    child()


def test_twin_python_child_isolated():
    child("-I")


def test_twin_python_child_no_site():
    child("-S")


# -- google-auth transports, google-cloud-storage ----------------------------------------------


def test_twin_auth_requests_transport():
    from google.auth.transport.requests import Request

    swallowed(lambda: Request()(TOKEN_URI, method="POST", body=b"grant_type=x", timeout=3))


def test_twin_auth_urllib3_transport():
    import urllib3
    from google.auth.transport.urllib3 import Request

    request = Request(urllib3.PoolManager(retries=False))
    swallowed(lambda: request(TOKEN_URI, method="POST", body=b"grant_type=x", timeout=3))


def test_twin_auth_http_client_transport():
    from google.auth.transport._http_client import Request  # http only: the metadata server's

    swallowed(lambda: Request()(METADATA_TOKEN, headers={"Metadata-Flavor": "Google"}, timeout=3))


def test_twin_auth_aiohttp_transport():
    from google.auth.transport._aiohttp_requests import Request

    async def fetch():
        request = Request()
        try:
            return await request(TOKEN_URI, method="POST", body=b"grant_type=x", timeout=3)
        finally:
            await request.close()

    swallowed(lambda: asyncio.run(fetch()))


def test_twin_auth_aio_session():
    from google.auth.aio.credentials import AnonymousCredentials
    from google.auth.aio.transport.sessions import AsyncAuthorizedSession

    async def get():
        session = AsyncAuthorizedSession(AnonymousCredentials())
        try:
            return await session.request("GET", f"{GCS}/replayed", total_attempts=1, timeout=3)
        finally:
            await session.close()

    swallowed(lambda: asyncio.run(get()))


def plain_http_storage():
    import requests
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    class PlainSession(requests.Session):  # not an AuthorizedSession: no google-auth below
        is_mtls = False  # what google-cloud-core asks of the session it is given

    return storage.Client(project="p", credentials=AnonymousCredentials(), _http=PlainSession())


def test_mocked_storage_plain_http():
    import requests_mock

    with requests_mock.Mocker() as served:
        served.get(f"{GCS}/replayed", json={"kind": "storage#bucket", "name": "replayed"})
        assert plain_http_storage().get_bucket("replayed", retry=None).name == "replayed"


def test_twin_storage_plain_http():
    swallowed(lambda: plain_http_storage().get_bucket("replayed", retry=None))

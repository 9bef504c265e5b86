# ruff: noqa: SIM105  (try/except/pass is the point: code under test that swallows the failure)
"""Inner suite (run by pytester in a loopback-only network namespace): gRPC under the guard.

grpcio's C-core resolves and connects outside Python's socket module, so the
test fence cannot stop it: this suite runs only inside `unshare -rn`, where
nothing but loopback exists, and refuses to make a reaching call anywhere else.
Every `test_mocked_*` is hermetic (a patched stub, a server on 127.0.0.1, an
emulator-style variable) and must be green under --cloudguard; every `test_twin_*`
makes the same call to Google without it and swallows the failure: it must be
red, naming its reach.
"""

import asyncio
import os
import socket
from concurrent import futures
from unittest import mock

import grpc
import grpc.aio
import pytest

TOPICS = "/google.pubsub.v1.Publisher/ListTopics"
PUBSUB = "pubsub.googleapis.com:443"


def require_netns():
    # Never make a reaching gRPC call unless only loopback exists beneath it.
    interfaces = {name for _, name in socket.if_nameindex()}
    assert interfaces == {"lo"}, f"not in a loopback-only namespace ({interfaces}): not calling"


def swallowed(call):
    require_netns()
    try:
        call()
    except Exception:
        pass  # the hazard: code under test that swallows the failure


def list_topics(target=PUBSUB):
    if target == PUBSUB:
        channel = grpc.secure_channel(target, grpc.ssl_channel_credentials())
    else:
        channel = grpc.insecure_channel(target)
    with channel:
        return channel.unary_unary(TOPICS)(b"", timeout=5)


@pytest.fixture
def loopback_server():
    """A Publisher on 127.0.0.1, as an emulator would be: every ListTopics answers b"topics"."""
    handler = grpc.method_handlers_generic_handler(
        "google.pubsub.v1.Publisher",
        {"ListTopics": grpc.unary_unary_rpc_method_handler(lambda request, context: b"topics")},
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2), handlers=(handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}"
    server.stop(None)


def test_mocked_patched_stub():
    # As GAPIC's own tests do: the channel to Google is made, its stub's __call__ is patched.
    channel = grpc.secure_channel(PUBSUB, grpc.ssl_channel_credentials())
    stub = channel.unary_unary(TOPICS)
    with mock.patch.object(type(stub), "__call__", return_value=b"patched") as call:
        assert stub(b"") == b"patched"
    call.assert_called_once()
    channel.close()


def test_twin_patched_stub():
    swallowed(list_topics)


def test_mocked_loopback_server(loopback_server):
    assert list_topics(loopback_server) == b"topics"


def test_twin_loopback_server():
    swallowed(list_topics)


def test_mocked_emulator_host(loopback_server, monkeypatch):
    monkeypatch.setenv("PUBSUB_EMULATOR_HOST", loopback_server.replace("127.0.0.1", "localhost"))
    assert list_topics(os.environ.get("PUBSUB_EMULATOR_HOST", PUBSUB)) == b"topics"


def test_twin_emulator_host():
    swallowed(lambda: list_topics(os.environ.get("PUBSUB_EMULATOR_HOST", PUBSUB)))


def test_mocked_aio_loopback_server(loopback_server):
    async def topics():
        async with grpc.aio.insecure_channel(loopback_server) as channel:
            return await channel.unary_unary(TOPICS)(b"", timeout=5)

    assert asyncio.run(topics()) == b"topics"


def test_twin_aio_call():
    async def topics():
        async with grpc.aio.secure_channel(PUBSUB, grpc.ssl_channel_credentials()) as channel:
            return await channel.unary_unary(TOPICS)(b"", timeout=5)

    swallowed(lambda: asyncio.run(topics()))


def test_twin_channel_ready():
    def ready():
        with grpc.secure_channel(
            "dns:///compute.googleapis.com", grpc.ssl_channel_credentials()
        ) as c:
            grpc.channel_ready_future(c).result(timeout=1)

    swallowed(ready)

"""moto in server mode on 127.0.0.1: one server per test process, emptied for every test."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator

import pytest
from moto.server import ThreadedMotoServer


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def endpoint(moto_endpoint: str) -> str:
    """The shared server, emptied: every test starts with no instances."""
    reset = urllib.request.Request(f"{moto_endpoint}/moto-api/reset", method="POST")
    # A bound, not a claim about speed: a machine at load 15 has taken over 10 s to answer.
    urllib.request.urlopen(reset, timeout=60).close()
    return moto_endpoint

"""How the Google guards name what was attempted: a REST URL's service and operation, a gRPC
target's hosts. Spelling only: nothing here resolves a name or imports a Google library."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cloudguard.guard.inprocess import google_guard, grpc_guard


@pytest.mark.parametrize(
    ("method", "url", "service", "operation"),
    [
        ("GET", "https://storage.googleapis.com/storage/v1/b/my-bucket/o", "storage", "GET b/o"),
        (
            "POST",
            "https://compute.googleapis.com/compute/v1/projects/p/zones/z/instances/vm:start",
            "compute",
            "POST projects/zones/instances:start",
        ),
        ("POST", "https://oauth2.googleapis.com/token", "credentials", "POST /token"),
        ("GET", "http://169.254.169.254", "credentials", "GET /"),
        (
            "GET",
            "http://metadata.google.internal/computeMetadata/v1/project/project-id",
            "credentials",
            "GET /computeMetadata/v1/project/project-id",
        ),
    ],
)
def test_a_google_rest_call_is_named_by_its_service_and_collections(
    method: str, url: str, service: str, operation: str
) -> None:
    attempt = google_guard.naming(method, url)
    assert (attempt.service, attempt.operation) == (service, operation)


def test_a_signed_urls_query_never_reaches_the_record() -> None:
    url = "https://storage.googleapis.com/b/o?X-Goog-Signature=SECRET&X-Goog-Credential=x"
    assert "SECRET" not in google_guard.naming("GET", url).url


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("pubsub.googleapis.com:443", [("pubsub.googleapis.com", "443")]),
        ("pubsub.googleapis.com", [("pubsub.googleapis.com", "443")]),
        ("dns:///compute.googleapis.com", [("compute.googleapis.com", "443")]),
        ("dns://8.8.8.8:53/compute.googleapis.com:443", [("compute.googleapis.com", "443")]),
        ("dns:compute.googleapis.com:443", [("compute.googleapis.com", "443")]),
        ("ipv4:10.0.0.1:443,169.254.169.254:80", [("10.0.0.1", "443"), ("169.254.169.254", "80")]),
        ("ipv6:[::1]:50051", [("::1", "50051")]),
        ("[::1]:50051", [("::1", "50051")]),
        ("localhost:8085", [("localhost", "8085")]),
        ("google-c2p:///storage.googleapis.com", [("storage.googleapis.com", "443")]),
        ("unix:/tmp/grpc.sock", []),
        ("unix-abstract:emulator", []),
    ],
)
def test_a_grpc_target_names_its_hosts(target: str, expected: list[tuple[str, str]]) -> None:
    assert list(grpc_guard.target_hosts(target)) == expected


GOOGLE_NAME = ("pubsub.googleapis.com",)


@pytest.mark.parametrize(
    ("target", "authorities", "expected"),
    [
        # The DNS server a target names is asked too; google-c2p asks the metadata server.
        ("dns://8.8.8.8:53/example.internal", (), [("example.internal", "443"), ("8.8.8.8", "53")]),
        ("dns://169.254.169.254/x", (), [("x", "443"), ("169.254.169.254", "53")]),
        (
            "google-c2p:///x.internal",
            (),
            [("x.internal", "443"), ("metadata.google.internal", "80")],
        ),
        # A claimed authority counts for an address that is not loopback, never for loopback.
        ("ipv4:142.250.1.95:443", GOOGLE_NAME, [("142.250.1.95", "443"), (GOOGLE_NAME[0], "443")]),
        ("ipv4:127.0.0.1:8085", GOOGLE_NAME, [("127.0.0.1", "8085")]),
        ("unix:/tmp/emulator.sock", GOOGLE_NAME, []),
    ],
)
def test_a_grpc_call_reaches_what_its_target_and_options_name(
    target: str, authorities: tuple[str, ...], expected: list[tuple[str, str]]
) -> None:
    assert list(grpc_guard.reached(target, authorities)) == expected


def test_an_xds_target_reaches_the_servers_its_bootstrap_names(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    servers = {"xds_servers": [{"server_uri": "trafficdirector.googleapis.com:443"}]}
    monkeypatch.setenv("GRPC_XDS_BOOTSTRAP_CONFIG", json.dumps(servers))
    assert list(grpc_guard.reached("xds:///backend")) == [
        ("backend", "443"),
        ("trafficdirector.googleapis.com", "443"),
    ]
    monkeypatch.delenv("GRPC_XDS_BOOTSTRAP_CONFIG")
    authority = {
        "authorities": {"a": {"xds_servers": [{"server_uri": "dns:///td.googleapis.com"}]}}
    }
    bootstrap = tmp_path / "bootstrap.json"
    bootstrap.write_text(json.dumps(authority))
    monkeypatch.setenv("GRPC_XDS_BOOTSTRAP", str(bootstrap))
    assert ("td.googleapis.com", "443") in grpc_guard.reached("xds://a/backend")
    monkeypatch.setenv("GRPC_XDS_BOOTSTRAP", str(tmp_path / "missing.json"))
    assert list(grpc_guard.reached("xds:///backend")) == [("backend", "443")]

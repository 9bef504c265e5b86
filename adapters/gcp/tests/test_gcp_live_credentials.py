"""The one endpoint rule on Google Cloud: a real identity never reaches a loopback endpoint.

Whoever listens on 127.0.0.1 (here the fake, standing for any local listener) must never
receive a real Google identity: neither application default credentials nor a
service-account key is even read when the endpoint is loopback, and nothing is sent there
(not a token request, not an API call). The converse: the fake's credential never goes to
Google. Both are the kernel's rule (cloudguard.cloud.endpoints), asked by
cloudguard_gcp.credentials before anything else.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cloudguard_gcp.adapter import GcpAdapter
from fake_gcp import FakeGcp, Instance, serve
from gcp_helpers import cli, controller_home, victim_key
from named_checks import broken

from cloudguard.cloud.records import SweepRequest

PROJECT = "fleet-pilot-7c7"


@pytest.fixture
def gcp() -> Iterator[FakeGcp]:
    with serve() as fake:
        fake.world.project(PROJECT, "418512345678")
        fake.world.instances.append(Instance(PROJECT, "europe-west4-a", "vm-1"))
        yield fake


def audit(fake: FakeGcp, tmp_path: Path, *args: str) -> Any:
    home = controller_home(tmp_path / "controller")
    return cli(
        "--provider", "gcp", "--gcp-scope", f"projects/{PROJECT}",
        "--management-endpoint", fake.base_url, "--ca-bundle", fake.ca_pem,
        "--controller-home", str(home), "--format", "json", *args,
    )  # fmt: skip


@pytest.mark.parametrize("identity", ["application-default", "key-file"])
def test_a_real_identity_is_never_sent_to_a_loopback_endpoint(
    gcp: FakeGcp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, identity: str
) -> None:
    key = victim_key(tmp_path / "victim-key.json", f"{gcp.base_url}/token")
    if identity == "application-default":
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key))
        done = audit(gcp, tmp_path)
    else:
        done = audit(gcp, tmp_path, "--gcp-key-file", str(key))
    assert gcp.connections == 0, broken(
        "real-identity-not-sent-to-loopback",
        f"the listener on loopback got {gcp.connections} connection(s), requests "
        f"{[(s.operation, s.authorization) for s in gcp.seen]}",
    )
    out = done.stdout + done.stderr
    assert done.exit_code == 75, broken(
        "real-identity-not-sent-to-loopback", f"exit {done.exit_code}: {out}"
    )
    assert "would hand a real Google Cloud identity" in out, broken(
        "real-identity-not-sent-to-loopback", f"no refusal named: {out}"
    )


def test_the_fake_credential_reaches_the_fake_with_its_own_token_only(
    gcp: FakeGcp, tmp_path: Path
) -> None:
    done = audit(gcp, tmp_path, "--credential", "fake-gcp")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert {s.authorization for s in gcp.seen} == {"Bearer cloudguard-fake-gcp"}


@pytest.mark.parametrize("endpoint", [None, "https://cloudasset.googleapis.com.evil.example"])
def test_the_fake_credential_never_goes_off_loopback(endpoint: str | None) -> None:
    request = SweepRequest(
        credential="fake-gcp", endpoint=endpoint, settings={"gcp_scope": (f"projects/{PROJECT}",)}
    )
    (failure,) = GcpAdapter().sweep(request).failures
    assert "answers only a loopback" in failure.reason, broken(
        "fake-credential-only-on-loopback", failure.reason
    )


def test_a_real_identity_goes_to_no_unknown_host(tmp_path: Path) -> None:
    request = SweepRequest(
        endpoint="https://compute.googleapis.com.evil.example",
        settings={"gcp_scope": (f"projects/{PROJECT}",)},
    )
    (failure,) = GcpAdapter().sweep(request).failures
    assert "is not one of Google Cloud's own endpoints" in failure.reason, failure.reason

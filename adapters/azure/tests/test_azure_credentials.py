"""Missing or unusable credentials: a named failure, and never a reach to real Azure.

Every test here seals the process first: no AZURE_*/IDENTITY_*/MSI_* variables,
an empty AZURE_CONFIG_DIR and HOME, a PATH without `az`/`azd`/`pwsh`, and a
socket guard that refuses any non-loopback connect before it leaves the host
(so DefaultAzureCredential's managed-identity probe of 169.254.169.254 fails
at once instead of reaching anything).
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from azure_helpers import SUB_A
from cloudguard_azure.adapter import AzureAdapter

from cloudguard.cloud.records import SweepRequest, SweepResult

_AMBIENT_PREFIXES = ("AZURE_", "IDENTITY_", "MSI_", "IMDS_", "MSAL_")


class BlockedConnect(OSError):
    pass


@pytest.fixture
def sealed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[str]]:
    """Seal the environment; yields the list of non-loopback connects that were refused."""
    for name in list(os.environ):
        if name.startswith(_AMBIENT_PREFIXES):
            monkeypatch.delenv(name)
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("AZURE_CONFIG_DIR", str(empty))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PATH", str(empty))  # no az, azd, pwsh
    refused: list[str] = []
    real_connect = socket.socket.connect

    def guarded_connect(self: socket.socket, address: Any) -> None:
        host = address[0] if isinstance(address, tuple) else ""
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = host == "localhost"
        if self.family in (socket.AF_INET, socket.AF_INET6) and not loopback:
            refused.append(str(host))
            raise BlockedConnect(f"test seal: connect to {host} refused")
        real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    yield refused


def bounded_sweep(request: SweepRequest, seconds: float = 60) -> SweepResult:
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(AzureAdapter().sweep, request).result(timeout=seconds)


def public_request(credential: str) -> SweepRequest:
    # No endpoint: the public ARM. The sweep must stop at the credential, before any ARM call.
    return SweepRequest(subscriptions=(SUB_A,), credential=credential)


def test_environment_credential_missing(sealed: list[str]) -> None:
    (failure,) = bounded_sweep(public_request("environment")).failures
    assert failure.source == "azure credential environment"
    assert "EnvironmentCredential" in failure.reason
    assert sealed == []  # nothing even tried the network


def test_cli_credential_without_az_on_path(sealed: list[str]) -> None:
    (failure,) = bounded_sweep(public_request("cli")).failures
    assert failure.source == "azure credential cli"
    assert "AzureCliCredential" in failure.reason
    assert "Azure CLI not found" in failure.reason
    assert sealed == []


def test_workload_identity_without_its_variables(sealed: list[str]) -> None:
    (failure,) = bounded_sweep(public_request("workload-identity")).failures
    assert failure.source == "azure credential workload-identity"
    assert "cannot be used" in failure.reason
    assert sealed == []


def test_default_chain_missing_names_every_credential_tried(
    sealed: list[str], cloudguard: Any
) -> None:
    (failure,) = bounded_sweep(public_request("default")).failures
    assert failure.source == "azure credential default"
    for tried in ("EnvironmentCredential", "ManagedIdentityCredential", "AzureCliCredential"):
        assert tried in failure.reason
    # Managed identity's IMDS probe was the only reach: the suite's own cloudguard plugin
    # refused and recorded it before any packet left, and the test says it expected that.
    (probe,) = cloudguard.expect(via="azure-core", target="169.254.169.254")
    assert "/metadata/identity/oauth2/token" in probe["argv"][-1]
    assert set(sealed) <= {"169.254.169.254"}


def test_fake_arm_credential_refused_off_loopback(sealed: list[str]) -> None:
    request = SweepRequest(
        subscriptions=(SUB_A,), credential="fake-arm", endpoint="https://management.azure.com"
    )
    (failure,) = bounded_sweep(request).failures
    assert "loopback" in failure.reason
    (failure,) = bounded_sweep(public_request("fake-arm")).failures
    assert "loopback" in failure.reason
    assert sealed == []


def test_unknown_credential_name_lists_the_choices(sealed: list[str]) -> None:
    (failure,) = bounded_sweep(public_request("kerberos")).failures
    assert "unknown credential 'kerberos'" in failure.reason
    assert "managed-identity" in failure.reason and "workload-identity" in failure.reason


@pytest.mark.parametrize(
    "host",
    [
        *("127.0.0.1", "127.1", "[::1]", "[::ffff:127.0.0.1]", "localhost", "a.localhost"),
        *("10.0.0.1", "[::ffff:10.0.0.1]", "management.azure.com", "localhost.example.com"),
    ],
)
def test_the_credential_rule_judges_loopback_as_the_guard_does(host: str) -> None:
    """One is_loopback: what the socket guard lets through as loopback, the credential rule
    treats as loopback too (so a real token is never handed to whoever listens there)."""
    from cloudguard.cloud.endpoints import is_loopback_endpoint
    from cloudguard.guard import hosts

    endpoint = f"https://{host}:8443/"
    assert is_loopback_endpoint(endpoint) == hosts.is_loopback(host)


def test_a_real_credential_is_refused_on_an_ipv4_mapped_loopback_endpoint() -> None:
    from cloudguard_azure import credentials

    endpoint = "https://[::ffff:127.0.0.1]:8443/"
    with pytest.raises(credentials.CredentialChoiceError, match="answered only by the 'fake-arm'"):
        credentials.build("default", endpoint)
    assert credentials.build("fake-arm", endpoint) is not None


@pytest.mark.parametrize(
    "endpoint",
    ["https://attacker.example", "http://management.azure.com", "https://x.azurewebsites.net"],
)
def test_a_real_credential_goes_only_to_azures_own_management_endpoints(endpoint: str) -> None:
    from cloudguard_azure import credentials

    with pytest.raises(credentials.CredentialChoiceError, match="not one of Azure's own"):
        credentials.build("cli", endpoint)
    for sovereign in (
        "https://management.usgovcloudapi.net",
        "https://management.chinacloudapi.cn",
    ):
        assert credentials.build("cli", sovereign) is not None

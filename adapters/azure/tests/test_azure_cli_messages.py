"""With no Azure identity, `cloudguard audit --provider azure` says so in its own
words: azure-identity's raw WARNING blocks are folded into cloudguard's failure,
which lists every credential tried, one a line, and is never cut."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from azure_helpers import SUB_A
from test_azure_credentials import sealed  # noqa: F401  (the fixture)
from typer.testing import CliRunner

RAW_BLOCK = "DefaultAzureCredential failed to retrieve a token from the included credentials."


def _cloudguard(*args: str) -> Any:
    from cloudguard import cli

    if not getattr(cli, "_registered_for_tests", False):
        cli._register_audit()
        cli._register_reap()
        cli._registered_for_tests = True  # type: ignore[attr-defined]
    return CliRunner().invoke(cli.app, list(args), env={"COLUMNS": "400"})


def _identity_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    # Outside pytest these go to stderr through Python's last-resort handler;
    # under pytest its log capture receives them, so that is where we look.
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("azure.identity") and r.levelno >= logging.WARNING
    ]


def test_no_identity_is_one_complete_cloudguard_failure(
    sealed: list[str],  # noqa: F811
    cloudguard: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    done = _cloudguard("audit", "--provider", "azure", "--subscription", SUB_A)
    assert done.exit_code == 75, done.output
    assert _identity_warnings(caplog) == []
    assert RAW_BLOCK not in done.stderr
    lines = done.stderr.splitlines()
    (head,) = [line for line in lines if line.startswith("cloudguard audit: could not read")]
    assert "azure credential default: no token for" in head
    assert "tried DefaultAzureCredential" in head
    for tried in ("ManagedIdentityCredential", "AzureCliCredential", "SharedTokenCacheCredential"):
        assert any(line.startswith(f"  {tried}: ") for line in lines), (tried, lines)
    assert "…(+" not in done.stderr  # nothing cut
    cloudguard.expect(via="azure-core", target="169.254.169.254")  # the managed-identity probe


def test_control_azure_identity_does_log_the_raw_block(
    sealed: list[str],  # noqa: F811
    cloudguard: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # What the test above proves absent: asked directly, azure-identity logs its
    # WARNING block (on stderr, outside pytest).
    from azure.core.exceptions import ClientAuthenticationError
    from azure.identity import DefaultAzureCredential

    with pytest.raises(ClientAuthenticationError):
        DefaultAzureCredential().get_token("https://management.azure.com/.default")
    assert any(RAW_BLOCK in message for message in _identity_warnings(caplog))
    cloudguard.expect(via="azure-core", target="169.254.169.254")

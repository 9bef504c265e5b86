"""`--provider NAME`: adapters from the `cloudguard.adapters` entry-point group."""

from __future__ import annotations

import json
from importlib.metadata import EntryPoint

import audit_fake_adapter
import pytest
from audit_helpers import run_audit_cli

from cloudguard.cloud import adapter_registry


def _entry(name: str, cls: str) -> EntryPoint:
    return EntryPoint(
        name=name, value=f"audit_fake_adapter:{cls}", group=adapter_registry.ENTRY_POINT_GROUP
    )


@pytest.fixture(autouse=True)
def installed(monkeypatch):
    adapters = {
        "fake": _entry("fake", "FakeAdapter"),
        "partial": _entry("partial", "PartialAdapter"),
        "crashing": _entry("crashing", "CrashingAdapter"),
        "wrong": _entry("wrong", "WrongResultAdapter"),
        "missing": EntryPoint(
            name="missing", value="no_such_module:Adapter", group=adapter_registry.ENTRY_POINT_GROUP
        ),
    }
    monkeypatch.setattr(adapter_registry, "installed_adapters", lambda: adapters)
    audit_fake_adapter.SEEN.clear()


def test_request_options_reach_the_adapter(tmp_path):
    bundle = tmp_path / "ca.pem"
    bundle.write_text("")  # --ca-bundle must name a readable file (checked when parsed)
    result = run_audit_cli(
        "--provider", "fake",
        "--subscription", "sub-1", "--subscription", "sub-2",
        "--all-subscriptions",
        "--resource-group", "pilot",
        "--region", "eastus", "--region", "westus",
        "--credential", "cli",
        "--concurrency", "9",
        "--retries", "14",
        "--management-endpoint", "https://127.0.0.1:8443",
        "--ca-bundle", str(bundle),
        "--task-tag", "fleet-task",
        "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (request,) = audit_fake_adapter.SEEN
    assert request.subscriptions == ("sub-1", "sub-2")
    assert request.all_subscriptions is True
    assert request.resource_groups == ("pilot",)
    assert request.regions == ("eastus", "westus")
    assert (request.credential, request.concurrency) == ("cli", 9)
    assert request.retries == 14
    assert (request.endpoint, request.ca_bundle) == ("https://127.0.0.1:8443", str(bundle))
    assert request.task_tag == "fleet-task"
    # The live resource is in the report like any other (not the fleet's under this tag).
    assert json.loads(result.stdout)["summary"]["untagged"] == 1


def test_the_retry_budget_comes_from_config_and_defaults_to_10(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run_audit_cli("--provider", "fake", "--allow-unverified").exit_code == 0
    (tmp_path / "cloudguard.toml").write_text("[audit]\nretries = 25\n")
    assert run_audit_cli("--provider", "fake", "--allow-unverified").exit_code == 0
    assert [request.retries for request in audit_fake_adapter.SEEN] == [10, 25]


def test_live_resources_are_classified(tmp_path):
    records = tmp_path / "records.json"
    records.write_text('{"tasks": []}')
    result = run_audit_cli("--provider", "fake", "--controller-records", str(records))
    assert result.exit_code == 1
    assert "vm-live" in result.stdout and "orphan" in result.stdout


def test_an_unknown_provider_is_a_usage_error_listing_the_installed_ones():
    result = run_audit_cli("--provider", "gcp")
    assert result.exit_code == 2
    message = " ".join(result.output.replace("│", " ").split())  # unwrap rich's error box
    assert "unknown provider 'gcp' (installed: crashing, fake, missing, partial, wrong)" in message


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("partial", "azure subscription s-2: HTTP 403 AuthorizationFailed"),
        ("crashing", "provider crashing: sweep failed: RuntimeError('token expired')"),
        ("wrong", "provider wrong: sweep returned dict, not a SweepResult"),
        ("missing", "provider missing: cannot load no_such_module:Adapter"),
    ],
)
def test_a_provider_that_cannot_sweep_is_75_naming_what(name, why):
    result = run_audit_cli("--provider", name)
    assert result.exit_code == 75
    assert why in result.stderr


def test_the_real_lookup_reads_the_entry_point_group(monkeypatch):
    monkeypatch.undo()
    names = adapter_registry.installed_adapters()
    assert all(ep.group == adapter_registry.ENTRY_POINT_GROUP for ep in names.values())

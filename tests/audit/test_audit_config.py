"""cloudguard.toml `[audit]`: every option can live there; a bad key or value is 97 naming it."""

from __future__ import annotations

import json

import pytest
from audit_helpers import azure_vm, controller_home, run_audit_cli, write_json
from named_checks import broken
from trusted_config import write_trusted


@pytest.fixture
def fleet(tmp_path):
    write_json(
        tmp_path / "vms.json",
        [
            azure_vm("vm-orphan", tags={"task-id": "t-lost"}),
            azure_vm("vm-known", tags={"task-id": "t-1"}),
        ],
    )
    controller_home(tmp_path / "home", meta=["t-1"])
    return tmp_path


def test_a_scheduled_job_is_just_cloudguard_audit(fleet, monkeypatch):
    # Paths are relative to the config file, and the config is found from a subdirectory
    # (of the same repository: discovery stops at the repository root).
    (fleet / ".git").mkdir()
    # The operator's own file, trusted (`cloudguard trust`): its leaked-by applies.
    write_trusted(
        fleet / "cloudguard.toml",
        "[audit]\n"
        'inventory = ["vms.json"]\n'
        'controller-home = "home"\n'
        'format = "json"\n'
        'grace = "30m"\n'
        'leaked-by = ["run-id=r1"]\n',
    )
    sub = fleet / "deep" / "er"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    result = run_audit_cli()
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["policy"]["grace_seconds"] == 1800
    assert report["policy"]["leaked_by"] == ["run-id=r1"]
    assert report["policy"]["untrusted_file"] is None
    assert {f["resource"]["name"]: f["verdict"] for f in report["findings"]} == {
        "vm-orphan": "orphan",
        "vm-known": "ok",
    }


def test_command_line_overrides_config(fleet, monkeypatch):
    (fleet / "cloudguard.toml").write_text(
        '[audit]\ninventory = "vms.json"\ncontroller-home = "home"\nformat = "json"\n'
    )
    monkeypatch.chdir(fleet)
    result = run_audit_cli("--format", "markdown")
    assert result.stdout.startswith("## cloudguard audit")


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ('invetory = ["vms.json"]', "audit.invetory"),
        ('grace = "soon"', "audit.grace"),
        # A bare number used to be silently seconds (2.5 was 2 s): a unit is required.
        ("grace = 5", "audit.grace"),
        ("grace = 2.5", "audit.grace"),
        ('grace = "5"', "audit.grace"),
        ("concurrency = 0", "audit.concurrency"),
        ('retries = "many"', "audit.retries"),
        ('fail-on = "pending"', "audit.fail-on"),
        ('format = "yaml"', "audit.format"),
        ("inventory = 3", "audit.inventory"),
        ('all-subscriptions = "yes"', "audit.all-subscriptions"),
        ('leaked-by = ["no-equals-sign"]', "audit.leaked-by"),
    ],
)
def test_invalid_config_is_97_naming_the_key(fleet, monkeypatch, body, named):
    (fleet / "cloudguard.toml").write_text(f"[audit]\n{body}\n")
    monkeypatch.chdir(fleet)
    result = run_audit_cli("--inventory", "vms.json")
    assert result.exit_code == 97, broken(
        "an-invalid-value-is-refused", f"{body!r} was accepted: exit {result.exit_code}"
    )
    assert named in result.stderr


def test_invalid_toml_and_missing_config_file_are_97(fleet, monkeypatch):
    (fleet / "broken.toml").write_text("[audit\n")
    monkeypatch.chdir(fleet)
    assert run_audit_cli("--config", "broken.toml", "--inventory", "vms.json").exit_code == 97
    missing = run_audit_cli("--config", "absent.toml", "--inventory", "vms.json")
    assert missing.exit_code == 97 and "absent.toml" in missing.stderr


def test_other_tables_are_not_the_auditors_business(fleet, monkeypatch):
    (fleet / "cloudguard.toml").write_text('[guard]\nanything = 1\n\n[audit]\nformat = "json"\n')
    monkeypatch.chdir(fleet)
    result = run_audit_cli("--inventory", "vms.json", "--controller-home", "home")
    assert result.exit_code == 1
    json.loads(result.stdout)

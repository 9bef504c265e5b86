"""Messages that tell a user what to do next, each with its exit code.

Each was, before, a true but unhelpful line (see docs/reference.md#messages).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cli_helpers import cloudguard

from cloudguard.cloud import adapter_registry


@pytest.fixture
def inventory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no cloudguard.toml of the project applies
    path = tmp_path / "inventory.json"
    path.write_text("[]")
    return path


def test_a_provider_whose_adapter_is_not_installed_names_the_package(
    inventory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(adapter_registry, "installed_adapters", lambda: {})
    done = cloudguard("audit", "--provider", "azure")
    assert done.exit_code == 2
    assert "unknown provider 'azure' (installed: none installed)" in done.output
    assert "pip install 'cloudguard-ci[azure]'" in done.output
    assert "cloudguard-azure" in done.output


def test_a_provider_nobody_ships_lists_the_known_adapters(
    inventory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(adapter_registry, "installed_adapters", lambda: {})
    done = cloudguard("audit", "--provider", "oracle")
    assert done.exit_code == 2
    assert "unknown provider 'oracle'" in done.output
    assert "known adapters: aws, azure, gcp" in done.output


def test_doctor_outside_a_run_checks_the_project_and_says_how_to_check_a_seal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no pytest configuration here or above
    done = cloudguard("doctor", env={"CLOUDGUARD_REACH_LOG": None, "CLOUDGUARD_SEAL_DIR": None})
    assert done.exit_code == 97
    assert "no pytest configuration file from here up: add cloudguard = true" in done.stderr
    assert "(to check a sealed process: `cloudguard run -- cloudguard doctor`)" in done.stderr


def test_check_on_a_file_that_is_not_a_reach_log_says_so(tmp_path: Path) -> None:
    config = tmp_path / "cloudguard.toml"
    config.write_text('[audit]\nformat = "json"\ngrace = "2h"\nrepo = "."')  # no final newline
    done = cloudguard("check", "--log", str(config))
    assert done.exit_code == 97
    assert f"{config} is not a cloudguard reach log" in done.stderr
    assert "torn" not in done.stderr


def test_check_on_a_torn_reach_log_still_says_torn(tmp_path: Path) -> None:
    # The control: the torn-line message is still there for a log that is one.
    log = tmp_path / "reach.jsonl"
    log.write_text('{"schema":1,"kind":"armed","at":"x","by":"t","pid":1}\n{"schema":1,"ki')
    done = cloudguard("check", "--log", str(log))
    assert done.exit_code == 97
    assert "line 2 is torn" in done.stderr


def test_reap_plan_from_a_json_that_is_no_audit_says_what_it_expected(tmp_path: Path) -> None:
    other = tmp_path / "package.json"
    other.write_text('{"name": "web", "version": "1.0.0"}')
    done = cloudguard("reap", "plan", str(other))
    assert done.exit_code == 97
    assert (
        'not a cloudguard.audit v1 or v2 report: a JSON document with no "schema" field '
        "(its keys: name, version), not something cloudguard wrote; write one with "
        "`cloudguard audit --format json`"
    ) in done.stderr
    assert "None" not in done.stderr


def test_repo_that_is_not_a_repository_is_our_message_not_gits(
    inventory: Path, tmp_path: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    done = cloudguard("audit", "-i", str(inventory), "--repo", str(plain))
    assert done.exit_code == 75
    assert "not a git repository: --repo takes a clone of the repository" in done.stderr
    assert "fatal:" not in done.stderr
    # The control: git itself does say "fatal:" there, which is what we no longer show.
    raw = subprocess.run(
        ["git", "-C", str(plain), "rev-parse", "--is-shallow-repository"],
        capture_output=True,
        text=True,
        env={"GIT_CEILING_DIRECTORIES": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert raw.returncode != 0 and "fatal:" in raw.stderr


def test_an_unknown_config_key_suggests_the_closest(inventory: Path, tmp_path: Path) -> None:
    (tmp_path / "cloudguard.toml").write_text('[audit]\nfromat = "json"\n')
    done = cloudguard("audit", "-i", str(inventory))
    assert done.exit_code == 97
    assert "audit.fromat: unknown key; did you mean 'format'?" in done.stderr


@pytest.mark.parametrize(
    "option", [["--subscription", "s1"], ["--all-subscriptions"], ["--region", "eastus"]]
)
def test_live_only_options_without_a_provider_are_usage_errors(
    inventory: Path, option: list[str]
) -> None:
    done = cloudguard("audit", "-i", str(inventory), *option)
    assert done.exit_code == 2
    assert f"{option[0]} applies to a live sweep: give --provider NAME too" in done.output


def test_an_unknown_credential_is_a_usage_error_before_any_sweep(inventory: Path) -> None:
    done = cloudguard("audit", "--provider", "azure", "--subscription", "s", "--credential", "krb")
    assert done.exit_code == 2
    assert "unknown credential 'krb' for provider azure; choose one of: default," in done.output


def test_reap_apply_with_an_unknown_credential_is_a_usage_error(tmp_path: Path) -> None:
    import json

    vm = {
        "id": "/subscriptions/00000000-0000-0000-0000-00000000c7c7/resourceGroups/PILOT/"
        "providers/Microsoft.Compute/virtualMachines/vm-orphan",
        "name": "vm-orphan",
        "location": "eastus",
        "resourceGroup": "pilot",
        "hardwareProfile": {"vmSize": "Standard_D4as_v6"},
        "powerState": "VM running",
        "timeCreated": "2026-01-01T00:00:00.0000000+00:00",
        "tags": {"task-id": "t-gone"},
        "vmId": "11111111-2222-3333-4444-555555555555",  # which VM was audited: planned
    }
    (tmp_path / "az.json").write_text(json.dumps([vm]))
    home = tmp_path / "home"
    for sub in ("state", "queue", "workers"):
        (home / sub).mkdir(parents=True)
    audit, plan = tmp_path / "audit.json", tmp_path / "plan.json"
    cloudguard("audit", "-i", str(tmp_path / "az.json"), "--controller-home", str(home),
               "-f", "json", "-o", str(audit))  # fmt: skip
    assert cloudguard("reap", "plan", str(audit), "-o", str(plan)).exit_code == 0
    done = cloudguard(
        "reap", "apply", str(plan), "--controller-home", str(home), "--credential", "krb",
        "--log", str(tmp_path / "reap.jsonl"),
    )  # fmt: skip
    assert done.exit_code == 2, done.output
    assert "unknown credential 'krb' for provider azure; choose one of: default," in done.output
    assert not (tmp_path / "reap.jsonl").exists()  # nothing started


def test_the_demo_without_the_azure_adapter_names_the_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "cloudguard_azure.demo", None)  # import fails
    done = cloudguard("demo")
    assert done.exit_code == 75
    assert "the demo needs the Azure adapter: pip install 'cloudguard-ci[azure]'" in done.stderr

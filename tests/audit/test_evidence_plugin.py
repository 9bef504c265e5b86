"""A new evidence source is one module and one line, options and all (tests/audit/toy_evidence.py).

The one line is its registration in `SOURCES`; nothing else of the core is
edited. Its option is then a flag of `audit` and `reap apply`, a key of
cloudguard.toml (its path resolved against the file), and its facts own
VMs like Terraform state's do.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import toy_evidence
from audit_helpers import azure_vm, by_name, cli_app, controller_home, run_audit_cli, write_json
from typer.testing import CliRunner

from cloudguard.audit.evidence.source_registry import SOURCES
from cloudguard.cli.reap import app as reap_app

WIDE = {"COLUMNS": "200"}  # rich wraps help at the terminal width


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SOURCES, toy_evidence.NAME, toy_evidence.FACTORY)  # the one line


@pytest.fixture
def fleet(tmp_path: Path) -> dict[str, str]:
    vms = [
        azure_vm("vm-held", tags={"task-id": "t-1"}),
        azure_vm("vm-lost", tags={"task-id": "t-2"}),
    ]
    inventory = write_json(tmp_path / "vms.json", vms)
    (tmp_path / "tickets.txt").write_text(vms[0]["id"].upper() + "\n")  # ARM ids fold case
    home = controller_home(tmp_path / "home")
    return {"inventory": str(inventory), "home": str(home), "dir": str(tmp_path)}


def _reasons(result: object) -> dict[str, list[str]]:
    report = json.loads(result.stdout)  # type: ignore[attr-defined]
    return {name: finding["reasons"] for name, finding in by_name(report).items()}


def test_its_option_is_a_flag_whose_facts_own_vms(registered: None, fleet: dict[str, str]) -> None:
    result = run_audit_cli(
        "--inventory", fleet["inventory"], "--controller-home", fleet["home"],
        "--toy-tickets", f"{fleet['dir']}/tickets.txt", "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 1, result.stderr  # vm-lost is still an orphan
    assert _reasons(result) == {
        "vm-held": ["owned-by-toy-tickets"],
        "vm-lost": ["no-controller-record"],
    }
    checked = json.loads(result.stdout)["evidence"]
    assert checked[toy_evidence.NAME] == f"toy tickets {fleet['dir']}/tickets.txt"


def test_its_option_is_a_config_key_resolved_against_the_file(
    registered: None, fleet: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(fleet["dir"])
    Path(fleet["dir"], "cloudguard.toml").write_text('[audit]\ntoy-tickets = "tickets.txt"\n')
    result = run_audit_cli(
        "--inventory", "vms.json", "--controller-home", "home", "--format", "json"
    )
    assert _reasons(result)["vm-held"] == ["owned-by-toy-tickets"], result.stderr


def test_its_option_is_shown_by_both_commands_that_read_evidence(registered: None) -> None:
    audit_help = CliRunner().invoke(cli_app(), ["audit", "--help"], env=WIDE).stdout
    apply_help = CliRunner().invoke(reap_app, ["apply", "--help"], env=WIDE).stdout
    assert "--toy-tickets" in audit_help and "cloud ids held by open tickets" in audit_help
    assert "--toy-tickets" in apply_help and "Toy tickets, re-read before each item" in apply_help


def test_control_unregistered_it_is_no_option_at_all(fleet: dict[str, str]) -> None:
    result = run_audit_cli("--inventory", fleet["inventory"], "--toy-tickets", "tickets.txt")
    assert result.exit_code == 2 and "No such option: --toy-tickets" in result.output

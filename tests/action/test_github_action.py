"""The GitHub Action (action.yml + action/run_audit.py), run locally as a runner would.

The script runs with GITHUB_STEP_SUMMARY, GITHUB_OUTPUT and RUNNER_TEMP set to
temporary files, against a local `az vm list` export and controller home.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft4Validator

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "action" / "run_audit.py"
OFFICIAL_SARIF = ROOT / "tests" / "schemas" / "sarif" / "sarif-2.1.0-rtm.5.json"


@pytest.fixture
def export(tmp_path: Path) -> Path:
    """A local export: one orphan (no controller record), one VM the controller knows."""

    def vm(name: str, task: str) -> dict[str, Any]:
        return {
            "id": f"/subscriptions/00000000-0000-0000-0000-00000000c7c7/resourceGroups/PILOT/"
            f"providers/Microsoft.Compute/virtualMachines/{name}",
            "name": name,
            "location": "eastus",
            "resourceGroup": "pilot",
            "hardwareProfile": {"vmSize": "Standard_D4as_v6"},
            "powerState": "VM running",
            "timeCreated": "2026-01-01T00:00:00.0000000+00:00",
            "tags": {"task-id": task},
        }

    (tmp_path / "az.json").write_text(
        json.dumps([vm("vm-orphan", "t-gone"), vm("vm-ok", "t-live")])
    )
    for sub in ("state", "queue", "workers"):
        (tmp_path / "home" / sub).mkdir(parents=True)
    (tmp_path / "home" / "state" / "t-live.meta").write_text("phase=running\n")
    return tmp_path


def run_action(tmp_path: Path, args: str, **inputs: str) -> tuple[int, dict[str, str], str]:
    runner = tmp_path / "runner"
    runner.mkdir(exist_ok=True)
    summary, outputs = runner / "summary.md", runner / "outputs.txt"
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(runner),
        "INPUT_ARGS": args,
        "INPUT_SARIF_FILE": str(tmp_path / "cloudguard.sarif"),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(outputs),
        "RUNNER_TEMP": str(runner),
    } | {f"INPUT_{k.upper()}": v for k, v in inputs.items()}
    done = subprocess.run(
        [sys.executable, str(SCRIPT)], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    written = dict(
        line.split("=", 1)
        for line in (outputs.read_text().splitlines() if outputs.exists() else [])
    )
    return done.returncode, written, summary.read_text() if summary.exists() else ""


def test_action_yml_is_a_composite_that_runs_the_script_without_inline_inputs() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    assert {"args", "package", "sarif-file", "fail-on-findings"} <= set(action["inputs"])
    steps = action["runs"]["steps"]
    assert "action/run_audit.py" in steps[-1]["run"]
    for step in steps:
        # Inputs reach the shell as environment variables, never pasted into the script.
        assert "${{" not in step["run"], step["run"]


def test_findings_go_to_the_summary_and_the_sarif_file(export: Path) -> None:
    args = f"--inventory {export / 'az.json'} --controller-home {export / 'home'}"
    code, outputs, summary = run_action(export, args)
    assert code == 1
    assert summary.startswith("## cloudguard audit")
    assert "| **orphan** | vm-orphan |" in summary
    assert outputs == {"exit-code": "1", "sarif-file": str(export / "cloudguard.sarif")}
    sarif = json.loads((export / "cloudguard.sarif").read_text())
    assert list(Draft4Validator(json.loads(OFFICIAL_SARIF.read_text())).iter_errors(sarif)) == []
    (result,) = sarif["runs"][0]["results"]
    assert result["ruleId"] == "cloudguard/orphan"


def test_findings_pass_the_step_when_asked_not_to_fail(export: Path) -> None:
    args = f"--inventory {export / 'az.json'} --controller-home {export / 'home'}"
    code, outputs, summary = run_action(export, args, fail_on_findings="false")
    assert code == 0
    assert outputs["exit-code"] == "1"
    assert "vm-orphan" in summary


def test_an_audit_that_did_not_run_fails_even_when_findings_may_pass(export: Path) -> None:
    args = f"--inventory {export / 'missing.json'} --controller-home {export / 'home'}"
    code, outputs, summary = run_action(export, args, fail_on_findings="false")
    assert code == 75
    assert outputs["exit-code"] == "75"
    assert "Could not read (the audit is incomplete)" in summary


def test_args_may_not_redirect_the_reports(export: Path) -> None:
    code, outputs, summary = run_action(export, f"--inventory {export / 'az.json'} -f json")
    assert code == 2
    assert outputs == {} and summary == ""


def _pr_config(export: Path, marker: Path) -> Path:
    """A cloudguard.toml a pull request committed: its command would run in the job."""
    script = f"open({str(marker)!r}, 'w').close()"
    config = export / "cloudguard.toml"
    config.write_text(
        f"[audit]\nowned-ids-command = [{json.dumps(sys.executable)}, '-c', {json.dumps(script)}]\n"
    )
    config.chmod(0o644)
    return config


def test_a_pull_requests_config_cannot_widen_trust_in_the_action(export: Path) -> None:
    marker = export / "the-command-ran"
    config = _pr_config(export, marker)
    # An earlier step of the job (the PR's own code) trusts its file in the runner's store.
    runner_state = export / "runner" / ".local" / "state"
    subprocess.run(
        [sys.executable, "-m", "cloudguard", "trust", str(config)],
        env={"PATH": "/usr/bin:/bin", "XDG_STATE_HOME": str(runner_state)},
        check=True, capture_output=True,
    )  # fmt: skip

    args = f"--inventory {export / 'az.json'} --controller-home {export / 'home'}"
    code, outputs, _ = run_action(export, args)

    assert not marker.exists(), "the pull request's command ran in the action"
    assert code == 97 and outputs["exit-code"] == "97"


def test_the_workflow_trusts_the_reviewed_config_by_its_digest(export: Path) -> None:
    marker = export / "the-command-ran"
    config = _pr_config(export, marker)
    reviewed = hashlib.sha256(config.read_bytes()).hexdigest()
    args = f"--inventory {export / 'az.json'} --controller-home {export / 'home'}"

    code, _, _ = run_action(export, args, trusted_config_sha256=reviewed)
    assert marker.exists(), f"the reviewed file's command did not run (exit {code})"

    marker.unlink()
    config.write_text(config.read_text() + "# changed by the pull request\n")
    code, _, _ = run_action(export, args, trusted_config_sha256=reviewed)
    assert code == 97 and not marker.exists(), "a changed file was trusted by an old digest"

"""The two fleets of docs/your-fleet.md, run as that page runs them (an export stands in for
the live sweep): each verdict its table promises, and the audit's exit code.

Shape 1: test labs Terraform manages (tags `lab-id`, `commit`; evidence: the
states and the list of live workspaces). Shape 2: a CI runner tagging what it
makes with its run id (after each run: `--leaked-by`; nightly: the runs still
in progress as controller records).
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import cloudguard

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "audit"))
from audit_helpers import azure_vm, by_name, make_repo

NOW = datetime.now(UTC)


def _vm(name: str, created: datetime | None = None, **tags: str) -> dict[str, Any]:
    return azure_vm(name, tags={k.replace("_", "-"): v for k, v in tags.items()}, created=created)


def _show_json(*vms: dict[str, Any]) -> dict[str, Any]:
    """`terraform show -json` of a lab whose state holds `vms`."""
    resources = [
        {"address": f"azurerm_linux_virtual_machine.vm{n}", "mode": "managed",
         "type": "azurerm_linux_virtual_machine", "name": f"vm{n}",
         "values": {"id": vm["id"], "name": vm["name"]}}
        for n, vm in enumerate(vms)
    ]  # fmt: skip
    return {"format_version": "1.0", "values": {"root_module": {"resources": resources}}}


def _verdicts(done: Any) -> dict[str, tuple[str, list[str]]]:
    report = json.loads(done.stdout)
    return {name: (f["verdict"], f["reasons"]) for name, f in by_name(report).items()}


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A repository with `cloudguard init`'s file, lab-a alive, lab-old destroyed."""
    monkeypatch.chdir(tmp_path)
    _, shas = make_repo(tmp_path, {"tests/test_lab.py": "def test_lab():\n    pass\n"})
    commit, bogus = shas[-1], "deadbeef" * 5
    in_state = _vm("vm-tf", lab_id="lab-a", commit=commit)
    fleet = [
        in_state,
        _vm("vm-sdk-live", lab_id="lab-a", commit=commit),
        _vm("vm-sdk-gone", lab_id="lab-old", commit=commit),
        _vm("vm-sdk-young", NOW - timedelta(minutes=5), lab_id="lab-old", commit=commit),
        _vm("vm-bad-live", lab_id="lab-a", commit=bogus),
        _vm("vm-bad-gone", lab_id="lab-old", commit=bogus),
        _vm("vm-jumpbox", owner="ops"),
    ]
    (tmp_path / "vms.json").write_text(json.dumps(fleet))
    (tmp_path / "states").mkdir()
    (tmp_path / "states/lab-a.json").write_text(json.dumps(_show_json(in_state)))
    (tmp_path / "labs.json").write_text(json.dumps({"tasks": ["lab-a"]}))
    made = cloudguard("init", "--no-input", "--task-tag", "lab-id", "--generation-tag",
                      "commit", "--repo", ".", "--no-pytest")  # fmt: skip
    assert made.exit_code == 0, made.output
    return {"dir": tmp_path}


def test_terraform_labs_the_state_owns_a_live_lab_explains_a_gone_lab_leaves_orphans(
    lab: dict[str, Any],
) -> None:
    done = cloudguard("audit", "--config", "cloudguard.toml", "-i", "vms.json", "-f", "json",
                      "--controller-records", "labs.json",
                      "--terraform-state", "states/lab-a.json")  # fmt: skip
    assert done.exit_code == 1, done.stderr
    assert _verdicts(done) == {
        "vm-tf": ("ok", ["owned-by-terraform-state"]),
        "vm-sdk-live": ("ok", []),
        "vm-sdk-gone": ("orphan", ["no-controller-record"]),
        "vm-sdk-young": ("pending", ["no-controller-record"]),
        "vm-bad-live": ("suspect", ["unknown-generation"]),
        "vm-bad-gone": ("orphan", ["no-controller-record", "unknown-generation"]),
    }, "the page's table for Terraform labs no longer holds"
    assert json.loads(done.stdout)["summary"]["untagged"] == 1  # the jumpbox: counted only


def test_terraform_labs_the_state_alone_never_disowns(lab: dict[str, Any]) -> None:
    done = cloudguard("audit", "--config", "cloudguard.toml", "-i", "vms.json", "-f", "json",
                      "--terraform-state", "states/lab-a.json")  # fmt: skip
    verdicts = _verdicts(done)
    assert verdicts["vm-tf"] == ("ok", ["owned-by-terraform-state"])
    # In no state and no list of live labs: unjudged, and the audit fails on it.
    assert verdicts["vm-sdk-gone"] == ("unverified", [])
    assert done.exit_code == 1, done.stderr
    assert "no evidence source could judge them" in done.stderr


RUN = "101"


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    fleet = [
        _vm("vm-this-run", NOW - timedelta(minutes=20), ci_run_id=RUN),
        _vm("vm-running", NOW - timedelta(hours=2), ci_run_id="102"),
        _vm("vm-cancelled", NOW - timedelta(days=2), ci_run_id="99"),
        _vm("vm-just-ended", NOW - timedelta(hours=1), ci_run_id="100"),
    ]
    (tmp_path / "vms.json").write_text(json.dumps(fleet))
    return tmp_path


def test_ci_runs_after_a_run_what_carries_its_id_leaked(runs: Path) -> None:
    check = ("audit", "--task-tag", "ci-run-id", "--leaked-by", f"ci-run-id={RUN}",
             "--allow-unverified", "--format", "junit", "--output", "leaks.xml")  # fmt: skip
    done = cloudguard(*check, "-i", "vms.json")
    assert done.exit_code == 1, done.stderr
    leaks = (runs / "leaks.xml").read_text()
    assert "vm-this-run" in leaks and "leaked-run-tag" in leaks
    # The control: the same check after a run that cleaned up is green, the other runs'
    # resources accepted unjudged, by name.
    fleet = json.loads((runs / "vms.json").read_text())
    cleaned = [vm for vm in fleet if vm["name"] != "vm-this-run"]
    (runs / "clean.json").write_text(json.dumps(cleaned))
    clean = cloudguard(*check, "-i", "clean.json")
    assert clean.exit_code == 0, clean.stderr


def test_ci_runs_nightly_a_run_no_longer_running_leaves_orphans(runs: Path) -> None:
    # What `gh run list --status in_progress --json databaseId --jq ...` prints.
    (runs / "running.json").write_text('{"tasks":["101","102"]}\n')
    done = cloudguard("audit", "-i", "vms.json", "-f", "json", "--task-tag", "ci-run-id",
                      "--controller-records", "running.json", "--grace", "6h")  # fmt: skip
    assert done.exit_code == 1, done.stderr
    assert _verdicts(done) == {
        "vm-this-run": ("ok", []),
        "vm-running": ("ok", []),
        "vm-cancelled": ("orphan", ["no-controller-record"]),
        "vm-just-ended": ("pending", ["no-controller-record"]),
    }, "the page's nightly check no longer holds"


def test_the_page_names_the_commands_this_file_runs() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "your-fleet.md").read_text()
    said = (
        "cloudguard init --no-input --task-tag lab-id --generation-tag commit",
        "--controller-records labs.json",
        '--leaked-by "ci-run-id=${GITHUB_RUN_ID}" --allow-unverified',
        "--controller-records running.json --grace 6h",
    )
    for words in said:
        assert words in page, f"docs/your-fleet.md no longer says {words!r}"

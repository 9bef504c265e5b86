"""The incident, end to end from files through the installed `cloudguard audit`.

A billable Standard_D4as_v6 VM `vm-fm7c799d-wkr-01` running in resource group
`pilot`, tagged with the hard-coded fixture task id `cloud-noenv-c7` and a
repository generation that is no commit, with no controller record at all.
Beside it, every other kind of fleet VM, so each verdict is proven at once.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from audit_helpers import (
    azure_vm,
    by_name,
    controller_home,
    make_repo,
    run_audit_process,
    write_json,
)

NOT_A_COMMIT = "c7c7c7c7d4a5f6e7c7c7c7c7d4a5f6e7c7c7c7c7"
LIFECYCLE_TEST = """
def test_lifecycle_refuses_without_provider(controller):
    # hard-coded task id: exactly the literal the leaked VM carried
    request = controller.request(task_id="cloud-noenv-c7")
    assert request.refused
"""
OTHER_TEST = 'FIXTURE_TASK = "cloud-fixture-b2"\n'


@pytest.fixture
def incident(tmp_path: Path) -> dict[str, Path | str]:
    repo, shas = make_repo(
        tmp_path / "repo",
        {"tests/test_lifecycle.py": LIFECYCLE_TEST, "tests/test_other.py": OTHER_TEST},
    )
    head = shas[-1]
    now = datetime.now(UTC)
    vms = [
        azure_vm(
            "vm-fm7c799d-wkr-01",
            tags={"task-id": "cloud-noenv-c7", "repository-generation": NOT_A_COMMIT},
            created=now - timedelta(hours=30),
        ),
        azure_vm(
            "vm-healthy",
            tags={"task-id": "task-0042", "repository-generation": head},
        ),
        azure_vm(
            "vm-record-but-fixture",
            tags={"task-id": "cloud-fixture-b2", "repository-generation": head},
            size="Standard_B2s",
        ),
        azure_vm(
            "vm-just-created",
            tags={"task-id": "task-0099", "repository-generation": head},
            created=now - timedelta(minutes=4),
        ),
        azure_vm("vm-untagged", tags=None, power="VM deallocated"),
        # Azure tag names are case-insensitive: the portal shows what was typed.
        azure_vm(
            "vm-case-variant",
            tags={"Task-Id": "task-0007", "Repository-Generation": head[:10]},
            power="VM deallocated",
        ),
    ]
    home = controller_home(
        tmp_path / "controller",
        meta=["task-0042"],
        queued=["cloud-fixture-b2"],
        workers={"w1": "task-0007", "w2": None},
    )
    inventory = write_json(tmp_path / "vms.json", vms)
    return {"repo": repo, "home": home, "inventory": inventory, "head": head, "tmp": tmp_path}


def _audit(incident: dict[str, Path | str], *extra: str) -> tuple[int, str, str]:
    done = run_audit_process(
        "--inventory",
        str(incident["inventory"]),
        "--controller-home",
        str(incident["home"]),
        "--repo",
        str(incident["repo"]),
        *extra,
        cwd=Path(incident["tmp"]),
    )
    return done.returncode, done.stdout, done.stderr


def test_incident_vm_is_an_orphan_with_every_reason_and_exit_1(incident):
    code, out, err = _audit(incident, "--format", "json")
    assert code == 1, err
    report = json.loads(out)
    assert report["schema"] == "cloudguard.audit" and report["schema_version"] == 2
    findings = by_name(report)

    orphan = findings["vm-fm7c799d-wkr-01"]
    assert orphan["verdict"] == "orphan"
    assert orphan["reasons"] == ["no-controller-record", "fixture-task-id", "unknown-generation"]
    assert orphan["checks"]["generation_detail"] == "no such commit"
    assert orphan["resource"]["group"] == "pilot"
    assert orphan["resource"]["size"] == "Standard_D4as_v6"
    assert orphan["resource"]["power_state"] == "running"
    assert orphan["billable"] is True
    assert orphan["cost"]["hourly"] == pytest.approx(0.172)
    # 30 hours at the table's hourly price, give or take the test's own runtime.
    assert orphan["cost"]["accrued"] == pytest.approx(0.172 * 30, abs=0.02)

    assert findings["vm-healthy"]["verdict"] == "ok"
    assert findings["vm-healthy"]["reasons"] == []
    assert findings["vm-healthy"]["checks"] == {
        "controller_record": "found",
        "fixture_id": "not-fixture",
        "generation": "commit",
        "generation_detail": "commit",
    }
    assert findings["vm-record-but-fixture"]["verdict"] == "suspect"
    assert findings["vm-record-but-fixture"]["reasons"] == ["fixture-task-id"]
    assert findings["vm-just-created"]["verdict"] == "pending"
    assert findings["vm-just-created"]["reasons"] == ["no-controller-record"]
    case = findings["vm-case-variant"]
    assert (case["task_id"], case["verdict"], case["billable"]) == ("task-0007", "ok", False)
    assert "disks still are" in case["cost"]["note"]

    assert "vm-untagged" not in findings
    assert report["summary"]["resources"] == 6
    assert report["summary"]["untagged"] == 1
    assert report["summary"]["by_verdict"] == {
        "leaked": 0,
        "orphan": 1,
        "suspect": 1,
        "pending": 1,
        "unverified": 0,
        "ok": 2,
    }
    assert report["prices"]["currency"] == "USD" and report["prices"]["as_of"]


def test_incident_table_names_the_orphan_first_with_its_cost(incident):
    code, out, _ = _audit(incident)
    assert code == 1
    rows = [line for line in out.splitlines() if "vm-" in line]
    assert "vm-fm7c799d-wkr-01" in rows[0] and "orphan" in rows[0]
    assert "0.1720 USD" in rows[0]
    assert "no-controller-record, fixture-task-id, unknown-generation" in rows[0]
    assert [r.split("│")[1].strip() for r in rows] == [
        "orphan",
        "suspect",
        "pending",
        "ok",
        "ok",
    ]
    assert "1 without the 'task-id' tag" in out
    assert "dated 2025-06-01" in out


def test_suspects_fail_only_with_fail_on_suspect(incident, tmp_path):
    inventory = json.loads(Path(incident["inventory"]).read_text())
    only_suspect = [vm for vm in inventory if vm["name"] in {"vm-record-but-fixture", "vm-healthy"}]
    write_json(Path(incident["inventory"]), only_suspect)
    assert _audit(incident)[0] == 0
    assert _audit(incident, "--fail-on", "suspect")[0] == 1

"""The incident on Google Cloud: a VM labelled with a fixture task id and a generation that
is no commit, with no controller record, is an orphan with its reasons.

The same fleet is audited from both gcloud exports (the asset search and the instance
listing), and swept live (Cloud Asset Inventory and Compute Engine, through the real clients,
from the fake Google Cloud on loopback); each finds the incident VM alone an orphan, and the
audit exits 1.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fake_gcp import Disk, Instance, serve
from gcp_helpers import PROJECT, ZONE, asset, cli, controller_home, instance, make_repo
from named_checks import broken

INCIDENT_VM = "vm-fm7c799d-wkr-01"
NOT_A_COMMIT = "c7c7c7c7d4a5f6e7c7c7c7c7d4a5f6e7c7c7c7c7"
LIFECYCLE_TEST = """
def test_lifecycle_refuses_without_provider(controller):
    request = controller.request(task_id="cloud-noenv-c7")
    assert request.refused
"""


@pytest.fixture
def fleet(tmp_path: Path) -> dict[str, Any]:
    head = make_repo(tmp_path / "repo", {"tests/test_lifecycle.py": LIFECYCLE_TEST})
    old = datetime.now(UTC) - timedelta(hours=30)
    labelled = {
        INCIDENT_VM: {"task-id": "cloud-noenv-c7", "repository-generation": NOT_A_COMMIT},
        "vm-healthy": {"task-id": "task-0042", "repository-generation": head},
    }
    listing = [instance(name, labels=labels, created=old) for name, labels in labelled.items()]
    listing.append(instance("vm-untagged", status="TERMINATED"))
    search = [
        asset(
            "compute.googleapis.com/Instance",
            f"projects/{PROJECT}/zones/{ZONE}/instances/{name}",
            labels=labels,
            state="RUNNING",
            created=old,
        )
        for name, labels in labelled.items()
    ]
    (tmp_path / "instances.json").write_text(json.dumps(listing))
    (tmp_path / "assets.json").write_text(json.dumps(search))
    home = controller_home(tmp_path / "controller", meta=("task-0042",))
    return {"tmp": tmp_path, "home": home, "repo": tmp_path / "repo", "head": head}


@pytest.mark.parametrize("export", ["instances.json", "assets.json"])
def test_the_incident_vm_is_an_orphan_with_its_reasons_and_exit_1(
    fleet: dict[str, Any], export: str
) -> None:
    done = cli(
        "--inventory", str(fleet["tmp"] / export),
        "--controller-home", str(fleet["home"]), "--repo", str(fleet["repo"]),
        "--fixtures-from", str(fleet["repo"] / "tests"), "--format", "json",
    )  # fmt: skip
    assert done.exit_code == 1, broken("incident-exit-1", f"exit {done.exit_code}: {done.stderr}")
    findings = {f["resource"]["name"]: f for f in json.loads(done.stdout)["findings"]}
    orphan = findings[INCIDENT_VM]
    assert orphan["verdict"] == "orphan", broken(
        "incident-vm-orphan", f"{INCIDENT_VM}: {orphan['verdict']} {orphan['reasons']}"
    )
    assert orphan["reasons"] == [
        "no-controller-record",
        "fixture-task-id",
        "unknown-generation",
    ], broken("incident-reasons", f"reasons {orphan['reasons']}")
    assert orphan["resource"]["provider"] == "gcp"
    assert orphan["resource"]["account"] == PROJECT
    assert orphan["resource"]["region"] == "europe-west4"
    assert orphan["resource"]["power_state"] == "running"
    assert orphan["billable"] is True, broken("running-bills", "a RUNNING VM is not billable")
    assert findings["vm-healthy"]["verdict"] == "ok"
    assert "vm-untagged" not in findings


def test_the_incident_vm_swept_live_is_an_orphan_with_its_reasons_and_exit_1(
    fleet: dict[str, Any],
) -> None:
    old = datetime.now(UTC) - timedelta(hours=30)
    head = fleet["head"]
    with serve() as gcp:
        gcp.world.project(PROJECT, "418512345678")
        labels = {
            INCIDENT_VM: {"task-id": "cloud-noenv-c7", "repository-generation": NOT_A_COMMIT},
            "vm-healthy": {"task-id": "task-0042", "repository-generation": head},
        }
        gcp.world.instances += [
            Instance(PROJECT, ZONE, name, labels=tags, created=old) for name, tags in labels.items()
        ]
        gcp.world.instances.append(Instance(PROJECT, ZONE, "vm-untagged", status="TERMINATED"))
        gcp.world.disks.append(Disk(PROJECT, ZONE, INCIDENT_VM, users=[INCIDENT_VM]))
        done = cli(
            "--provider", "gcp", "--gcp-scope", f"projects/{PROJECT}",
            "--credential", "fake-gcp", "--management-endpoint", gcp.base_url,
            "--ca-bundle", gcp.ca_pem,
            "--controller-home", str(fleet["home"]), "--repo", str(fleet["repo"]),
            "--fixtures-from", str(fleet["repo"] / "tests"), "--format", "json",
        )  # fmt: skip
    assert done.exit_code == 1, broken(
        "live-incident-exit-1", f"exit {done.exit_code}: {done.stderr}"
    )
    findings = {f["resource"]["name"]: f for f in json.loads(done.stdout)["findings"]}
    orphan = findings[INCIDENT_VM]
    assert (orphan["verdict"], orphan["reasons"]) == (
        "orphan",
        ["no-controller-record", "fixture-task-id", "unknown-generation"],
    ), broken("live-incident-orphan", f"{orphan['verdict']} {orphan['reasons']}")
    resource = orphan["resource"]
    assert (
        resource["id"]
        == f"//compute.googleapis.com/projects/{PROJECT}/zones/{ZONE}/instances/{INCIDENT_VM}"
    )
    assert (resource["provider"], resource["account"], resource["region"]) == (
        "gcp",
        PROJECT,
        "europe-west4",
    )
    assert (resource["size"], resource["power_state"], orphan["billable"]) == (
        "n2-standard-4",
        "running",
        True,
    )
    assert findings["vm-healthy"]["verdict"] == "ok"
    assert "vm-untagged" not in findings


def test_a_live_gcp_sweep_without_a_scope_is_did_not_run_not_clean(tmp_path: Path) -> None:
    home = controller_home(tmp_path / "controller")
    done = cli("--provider", "gcp", "--controller-home", str(home))
    assert done.exit_code == 75, broken(
        "scopeless-sweep-did-not-run", f"exit {done.exit_code}: {done.stdout} {done.stderr}"
    )
    assert "no scope to sweep" in done.stdout + done.stderr

"""A third cloud with zero core edits: tests/toycloud, found through its entry point.

The toy adapter is an installed distribution (cloudguard-toycloud, a workspace
member in the dev group) registering `toy` in the `cloudguard.adapters` group,
exactly as cloudguard-azure and cloudguard-aws do. Every run below is the
installed `cloudguard` command in a fresh process, with nothing patched: what it
knows of the toy cloud (its export, power states, prices, reap verbs, label
case, scope) it learns from the adapter object alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from datetime import UTC, datetime, timedelta
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from audit_helpers import CLOUDGUARD, by_name, controller_home, write_json
from named_checks import broken
from trusted_config import write_trusted

from cloudguard.audit.auditor import run_audit
from cloudguard.audit.cost import bundled_prices
from cloudguard.audit.evidence.interface import EvidenceRequest
from cloudguard.audit.formats.table import TableFormat
from cloudguard.audit.inventory_files import InventoryFile
from cloudguard.documents.findings import AuditPolicy

NOW = datetime.now(UTC)
TENANT = "tenant-7"


def machine(handle: str, task: str, *, state: str = "on", shape: str = "small") -> dict[str, Any]:
    return {
        "handle": handle,
        "tenant": TENANT,
        "zone": "z1",
        "shape": shape,
        "state": state,
        # Label names in another case than the audit's `task-id`: the toy cloud, like
        # Azure, compares them case-insensitively (its adapter says so).
        "labels": {"Task-ID": task},
        # Born ten hours before the machine is made, not before the module was imported: a
        # test that runs a minute after collection would see 10.02 hours.
        "born": (datetime.now(UTC) - timedelta(hours=10)).isoformat(),
    }


def world() -> dict[str, Any]:
    return {
        "machines": [
            machine("m-orphan", "cloud-noenv-c7"),
            machine("m-known", "task-0042"),
            machine("m-paused", "task-0099", state="paused"),
        ]
    }


def cloudguard(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CLOUDGUARD), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_the_toy_adapter_is_an_installed_entry_point_not_a_patch() -> None:
    (found,) = entry_points(group="cloudguard.adapters", name="toy")
    assert found.value == "cloudguard_toycloud:ToyAdapter"
    assert found.dist is not None and found.dist.name == "cloudguard-toycloud"


def test_a_third_cloud_audits_from_its_export_with_its_own_rules(tmp_path: Path) -> None:
    home = controller_home(tmp_path / "controller", meta=["task-0042"])
    export = write_json(tmp_path / "toyctl.json", {"toycloud": world()})
    done = cloudguard(
        "audit", "--inventory", str(export), "--controller-home", str(home),
        "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    findings = by_name(json.loads(done.stdout))
    assert "m-orphan" in findings, broken(
        "label-names-folded", "label names compared exactly on a case-insensitive cloud"
    )
    assert done.returncode == 1, done.stderr  # an orphan found
    orphan = findings["m-orphan"]
    assert orphan["verdict"] == "orphan"
    assert orphan["resource"]["provider"] == "toy"
    # Priced from the adapter's own list (its price_key folds "small" to "Small"'s key).
    assert orphan["billable"] is True and orphan["cost"]["hourly"] == 0.25, orphan
    assert orphan["cost"]["accrued"] == 2.5  # ten hours since born
    # Paused does not bill on the toy cloud: its billable power states say so.
    assert findings["m-paused"]["billable"] is False, broken(
        "its-billable-states", "billed in a state its cloud does not bill"
    )
    assert "m-known" not in findings or findings["m-known"]["verdict"] != "orphan"


def test_a_third_cloud_sweeps_shows_its_scope_and_reaps_with_its_own_verbs(
    tmp_path: Path,
) -> None:
    home = controller_home(tmp_path / "controller", meta=["task-0042"])
    cloud = write_json(tmp_path / "toy-cloud.json", world())
    live = ("--provider", "toy", "--management-endpoint", str(cloud))
    report = tmp_path / "audit.json"
    swept = cloudguard(
        "audit", *live, "--controller-home", str(home), "--format", "json",
        "--output", str(report), cwd=tmp_path,
    )  # fmt: skip
    assert swept.returncode == 1, swept.stderr
    plan = tmp_path / "plan.json"
    planned = cloudguard(
        "reap", "plan", str(report), "--action", "delete", "--output", str(plan), cwd=tmp_path
    )
    assert planned.returncode == 0, planned.stderr
    items = json.loads(plan.read_text())["items"]
    # `delete` is `scrap` there (its reap_actions), for the running and the paused orphan.
    assert sorted((i["id"], i["action"]) for i in items) == [
        ("m-orphan", "scrap"),
        ("m-paused", "scrap"),
    ]

    write_trusted(tmp_path / "cloudguard.toml", f'[reap]\naccounts = ["{TENANT}"]\n')
    digest = "sha256:" + hashlib.sha256(plan.read_bytes()).hexdigest()
    applied = cloudguard(
        "reap", "apply", str(plan), *live[2:], "--controller-home", str(home),
        "--yes", "--approve", digest, "--log", str(tmp_path / "reap.jsonl"), cwd=tmp_path,
    )  # fmt: skip
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert sorted(json.loads(cloud.read_text())["actions"]) == [
        ["scrap", "m-orphan"],
        ["scrap", "m-paused"],
    ]


def findings_named(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode in (0, 1), done.stderr
    return sorted(by_name(json.loads(done.stdout)))


def test_a_third_cloud_takes_an_option_of_its_own_from_the_command_line_and_the_config(
    tmp_path: Path,
) -> None:
    # `--toy-zone` is declared by the toy adapter alone: the core learns it from the adapter
    # object and hands its value back in the sweep request, as it does Azure's --engine.
    second = {**machine("m-zone-2", "task-7"), "zone": "z2"}
    cloud = write_json(
        tmp_path / "toy-cloud.json", {"machines": [machine("m-zone-1", "t-1"), second]}
    )
    live = ("audit", "--provider", "toy", "--management-endpoint", str(cloud), "--format", "json")

    assert "--toy-zone" in cloudguard("audit", "--help", cwd=tmp_path).stdout
    assert findings_named(cloudguard(*live, cwd=tmp_path)) == ["m-zone-1", "m-zone-2"]
    by_flag = findings_named(cloudguard(*live, "--toy-zone", "z2", cwd=tmp_path))
    (tmp_path / "cloudguard.toml").write_text('[audit]\ntoy-zone = "z2"\n')
    by_config = findings_named(cloudguard(*live, cwd=tmp_path))
    assert by_flag == by_config == ["m-zone-2"], broken(
        "its-own-option-delivered", "the toy cloud's own option did not reach its sweep"
    )


def test_a_third_clouds_config_key_is_validated_like_any_other(tmp_path: Path) -> None:
    (tmp_path / "cloudguard.toml").write_text("[audit]\ntoy-zone = 2\n")
    done = cloudguard("audit", "--provider", "toy", cwd=tmp_path)
    assert done.returncode == 97, done.stderr
    assert "audit.toy-zone: expected a string, got int" in done.stderr


def test_a_terminal_shows_the_scope_the_adapter_names(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "240")
    export = write_json(tmp_path / "toyctl.json", {"toycloud": world()})
    report = run_audit(
        [InventoryFile(str(export))],
        EvidenceRequest(controller_home=str(controller_home(tmp_path / "controller"))),
        AuditPolicy(),
        bundled_prices(),
        NOW,
    )
    # The table's "where" column is the adapter's scope_of: tenant@zone on the toy cloud.
    assert f"{TENANT}@z1" in TableFormat().render(report, color=True)

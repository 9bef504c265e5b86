"""The summary counts each resource once: a leaked VM without the task tag is a
finding, not also "not the fleet's"."""

from __future__ import annotations

import json
from pathlib import Path

from audit_helpers import run_audit_cli
from report_fleet import fleet_args


def test_every_resource_is_counted_once(tmp_path: Path) -> None:
    args = fleet_args(tmp_path)
    document = json.loads(run_audit_cli(*args, "--format", "json").stdout)
    summary = document["summary"]
    leaked = [f for f in document["findings"] if f["verdict"] == "leaked"]
    # The case exists: the leaked VM carries no task tag at all.
    assert [f["task_id"] for f in leaked] == [None]
    assert summary["untagged"] + summary["findings"] == summary["resources"] == 8
    assert summary["untagged"] == 1  # vm-unrelated only
    table = run_audit_cli(*args, "--format", "table").stdout
    assert "8 resources, 1 without the 'task-id' tag (not the fleet's); 1 leaked" in table

"""Helpers for the reaper's tests: real audit reports of a small fleet, and the CLI in-process."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from cloudguard.audit.auditor import run_audit
from cloudguard.audit.cost import bundled_prices
from cloudguard.audit.evidence.interface import EvidenceRequest
from cloudguard.audit.formats.json_report import JsonFormat
from cloudguard.cli.reap import app as reap_app
from cloudguard.cloud.adapter_registry import ENTRY_POINT_GROUP
from cloudguard.cloud.records import Resource, SweepResult
from cloudguard.documents.findings import AuditPolicy
from cloudguard.documents.plan import Plan
from cloudguard.documents.reap_log import read_reap_log
from cloudguard.reap.planning import build_plan

SUB = "00000000-0000-0000-0000-00000000c7c7"
NOW = datetime.now(UTC)
RECORDED_TASK = "task-0042"


def resource(
    name: str,
    tags: Mapping[str, str],
    *,
    power: str = "running",
    kind: str = "vm",
    provider: str = "azure",
    created: datetime | None = None,
) -> Resource:
    kind_path = "virtualMachines" if kind == "vm" else "disks"
    return Resource(
        provider=provider,
        account=SUB if provider == "azure" else "123456789012",
        region="westeurope" if provider == "azure" else "us-east-1",
        group="pilot" if provider == "azure" else "",
        id=(
            f"/subscriptions/{SUB}/resourceGroups/pilot/providers/Microsoft.Compute/{kind_path}/{name}"
            if provider == "azure"
            else name
        ),
        name=name,
        kind=kind,
        size="Standard_D4as_v6" if kind == "vm" else "Premium_LRS",
        power_state=power if kind == "vm" else "unknown",
        created=created or NOW - timedelta(days=3),
        tags=dict(tags),
        source="test",
        uid=f"uid-{name}" if provider == "azure" else "",
    )


def fleet() -> list[Resource]:
    """Every verdict, plus the cases the plan must leave alone."""
    return [
        resource("vm-orphan", {"task-id": "cloud-noenv-c7", "repository-generation": "c7" * 20}),
        resource("vm-ok", {"task-id": RECORDED_TASK}),
        resource("vm-pending", {"task-id": "task-0099"}, created=NOW - timedelta(minutes=5)),
        resource("vm-leaked", {"task-id": RECORDED_TASK, "run-id": "ci-77"}),
        resource("vm-protected", {"task-id": "task-0100", "CloudGuard-Protect": ""}),
        resource("vm-off", {"task-id": "task-0101"}, power="deallocated"),
        resource("disk-orphan", {"task-id": "task-0102"}, kind="disk"),
        resource("i-0aws0orphan", {"task-id": "task-0103"}, provider="aws"),
    ]


class Memory:
    def __init__(self, resources: Sequence[Resource]) -> None:
        self.resources = tuple(resources)

    def read(self) -> SweepResult:
        return SweepResult(self.resources)


def controller_home(root: Path, tasks: Sequence[str] = (RECORDED_TASK,)) -> Path:
    for folder in ("state", "queue", "workers"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    for task in tasks:
        (root / "state" / f"{task}.meta").write_text("phase=running\n")
    return root


def audit_report(resources: Sequence[Resource], home: Path, **evidence: Any) -> dict[str, Any]:
    """A real `cloudguard audit --format json` document of `resources`, its evidence the
    controller home and any other sources' values given (`owned_ids=("owned.txt",)`)."""
    report = run_audit(
        [Memory(resources)],
        EvidenceRequest(controller_home=str(home), **evidence),
        AuditPolicy(leaked_by=(("run-id", "ci-77"),)),
        bundled_prices(),
        NOW,
    )
    document: dict[str, Any] = json.loads(JsonFormat().render(report))
    return document


def planned_fleet(root: Path) -> tuple[Plan, Path]:
    """The fleet put in the fake cloud's world, a controller home under `root`, and the plan
    that deletes what their audit found (with the fake adapters installed by the caller)."""
    import reap_fake_adapter

    home = controller_home(root / "controller")
    resources = fleet()
    reap_fake_adapter.WORLD.update({r.id: r for r in resources})
    report = audit_report(resources, home)
    plan = build_plan(report, source="audit.json", verdicts=[], requested_action="delete", now=NOW)
    return plan, home


def write_json(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document))
    return path


def entry(cls: str) -> EntryPoint:
    return EntryPoint(name="azure", value=f"reap_fake_adapter:{cls}", group=ENTRY_POINT_GROUP)


def cli(*args: str) -> Any:
    app = typer.Typer()

    @app.callback()
    def main() -> None:  # a group, so `reap plan` is invoked as users do
        pass

    app.add_typer(reap_app, name="reap")
    # COLUMNS: rich wraps its error box at the terminal width; a long temp path must not
    # split the words a test looks for.
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "1000"})


def digest(plan: Path) -> str:
    return "sha256:" + hashlib.sha256(plan.read_bytes()).hexdigest()


def events(log: Path) -> list[dict[str, Any]]:
    """The log's records, read back by its own strict reader."""
    return read_reap_log(log)

"""`cloudguard audit`, `reap plan` and `reap apply` on Google Cloud, as users run them: the real
google-cloud-* clients against the fake Google Cloud on 127.0.0.1 (fake_gcp, fake_gcp_items).

`Fleet` is one project of the fake with a controller home, a working directory whose
cloudguard.toml lists the project in `[reap] accounts`, and the commands run in-process
through the CLI.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fake_gcp import FakeGcp, Instance
from in_process_cli import cli, digest
from reap_workspace import reap_workspace

PROJECT = "fleet-pilot-7c7"
ZONE = "europe-west4-a"
REGION = "europe-west4"
ORPHAN_TASK = "cloud-noenv-c7"
KNOWN_TASK = "task-0042"
COMPUTE = f"//compute.googleapis.com/projects/{PROJECT}"


def vm_id(name: str, zone: str = ZONE) -> str:
    return f"{COMPUTE}/zones/{zone}/instances/{name}"


@dataclass
class Fleet:
    gcp: FakeGcp
    home: Path
    work: Path

    def live(self) -> list[str]:
        return [
            "--credential", "fake-gcp", "--management-endpoint", self.gcp.base_url,
            "--ca-bundle", self.gcp.ca_pem,
        ]  # fmt: skip

    def audit(self, *extra: str) -> dict[str, Any]:
        report = self.work / "audit.json"
        done = cli(
            "audit", "--provider", "gcp", "--gcp-scope", f"projects/{PROJECT}", *self.live(),
            "--controller-home", str(self.home), "--grace", "0s", "--format", "json",
            "--output", str(report), *extra,
        )  # fmt: skip
        assert done.exit_code in (0, 1), done.output
        return dict(json.loads(report.read_text()))

    def plan(self, *extra: str, audit: tuple[str, ...] = ()) -> Path:
        self.audit(*audit)
        plan = self.work / "plan.json"
        done = cli(
            "reap", "plan", "--from", str(self.work / "audit.json"), "--output", str(plan), *extra
        )
        assert done.exit_code == 0, done.output
        return plan

    def apply(self, plan: Path, *extra: str) -> tuple[int, str, list[dict[str, Any]]]:
        log = self.work / "reap.jsonl"
        log.unlink(missing_ok=True)
        approve = ("--approve", digest(plan)) if "--yes" in extra else ()
        done = cli(
            "reap", "apply", str(plan), *self.live(), "--controller-home", str(self.home),
            "--grace", "0s", "--log", str(log), *approve, *extra,
        )  # fmt: skip
        records = (
            [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        )
        return done.exit_code, done.output, records

    def instance(self, name: str) -> Instance | None:
        return next((i for i in self.gcp.world.instances if i.name == name), None)


def make_fleet(gcp: FakeGcp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fleet:
    """The incident VM (an orphan) and a healthy VM, each with its boot disk."""
    work, home = reap_workspace(tmp_path, monkeypatch, PROJECT)
    (home / "state" / f"{KNOWN_TASK}.meta").write_text("phase=running\n")
    gcp.world.project(PROJECT, "418512345678")
    old = datetime.now(UTC) - timedelta(hours=30)
    gcp.world.instances += [
        Instance(PROJECT, ZONE, "vm-orphan", labels={"task-id": ORPHAN_TASK}, created=old),
        Instance(PROJECT, ZONE, "vm-healthy", labels={"task-id": KNOWN_TASK}, created=old),
    ]
    return Fleet(gcp, home, work)


def events(records: list[dict[str, Any]]) -> list[str]:
    return [e["event"] for e in records]


def skip_codes(records: list[dict[str, Any]]) -> list[str]:
    return [s["code"] for e in records if e["event"] == "skipped" for s in e["skips"]]

"""Helpers for the auditor's tests: inventories, controller homes and real git repositories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from cloudguard.cli.audit import register_audit

CLOUDGUARD = Path(sys.executable).parent / "cloudguard"
SUBSCRIPTION = "00000000-0000-0000-0000-00000000c7c7"

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str, stdin: str | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | _GIT_ENV
    env["HOME"] = str(repo.parent)  # no user config leaks in
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return done.stdout.strip()


def make_repo(
    root: Path, test_files: Mapping[str, str], commits: int = 2
) -> tuple[Path, list[str]]:
    """A real repository with `test_files` committed, plus a few more commits. Returns shas."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    shas = []
    for index in range(commits):
        if index == 0:
            for relative, text in test_files.items():
                path = root / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
        else:
            (root / "CHANGES").write_text(f"change {index}\n")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"commit {index}")
        shas.append(git(root, "rev-parse", "HEAD"))
    return root, shas


def azure_vm(
    name: str,
    *,
    tags: Mapping[str, str] | None,
    size: str = "Standard_D4as_v6",
    power: str = "VM running",
    group: str = "pilot",
    created: datetime | None = None,
    subscription: str = SUBSCRIPTION,
) -> dict[str, Any]:
    """One entry of `az vm list --show-details -o json`, with the fields az really prints."""
    created = created or datetime.now(UTC) - timedelta(days=3)
    return {
        "id": f"/subscriptions/{subscription}/resourceGroups/{group.upper()}/providers/"
        f"Microsoft.Compute/virtualMachines/{name}",
        "name": name,
        "location": "eastus",
        "resourceGroup": group,
        "hardwareProfile": {"vmSize": size},
        "powerState": power,
        "provisioningState": "Succeeded",
        # az prints seven fractional digits.
        "timeCreated": created.strftime("%Y-%m-%dT%H:%M:%S.%f") + "1+00:00",
        "tags": dict(tags) if tags is not None else None,
        "vmId": "11111111-2222-3333-4444-555555555555",
    }


def aws_instances(*instances: Mapping[str, Any], owner: str = "123456789012") -> dict[str, Any]:
    return {"Reservations": [{"OwnerId": owner, "Instances": list(instances)}]}


def aws_instance(
    instance_id: str,
    *,
    tags: Mapping[str, str],
    instance_type: str = "m5.large",
    state: str = "running",
    launched: datetime | None = None,
) -> dict[str, Any]:
    launched = launched or datetime.now(UTC) - timedelta(days=1)
    return {
        "InstanceId": instance_id,
        "InstanceType": instance_type,
        "LaunchTime": launched.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        "Placement": {"AvailabilityZone": "us-east-1a"},
        "State": {"Code": 16, "Name": state},
        "Tags": [{"Key": k, "Value": v} for k, v in tags.items()],
    }


def write_json(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document))
    return path


def controller_home(
    root: Path,
    *,
    meta: Sequence[str] = (),
    queued: Sequence[str] = (),
    workers: Mapping[str, str | None] | None = None,
) -> Path:
    for sub in ("state", "queue", "workers"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for task in meta:
        (root / "state" / f"{task}.meta").write_text("phase=running\n")
    for task in queued:
        (root / "queue" / f"{task}.json").write_text(json.dumps({"task": task}))
    for worker, task in (workers or {}).items():
        (root / "workers" / f"{worker}.json").write_text(json.dumps({"id": worker, "task": task}))
    return root


def cli_app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:  # a group, so the command is invoked as `audit`, as users do
        pass

    register_audit(app)
    return app


def run_audit_cli(*args: str, stdin: str | None = None) -> Any:
    """`cloudguard audit ARGS` in-process. Result has .exit_code, .stdout, .stderr."""
    # COLUMNS: rich wraps its error box at the terminal width (see reap_helpers).
    return CliRunner().invoke(cli_app(), ["audit", *args], input=stdin, env={"COLUMNS": "1000"})


def run_audit_process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The installed `cloudguard audit` entry point, as a user runs it."""
    return subprocess.run(
        [str(CLOUDGUARD), "audit", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    )


def by_name(document: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["resource"]["name"]: f for f in document["findings"]}

"""Google Cloud's exports as gcloud prints them, and the audit command run in-process."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from cloudguard.cli.audit import register_audit

PROJECT = "fleet-pilot-7c7"
PROJECT_NUMBER = "projects/418512345678"
ZONE = "europe-west4-a"
PACIFIC = timezone(timedelta(hours=-8))  # Compute writes the offset of its own zone
COMPUTE_V1 = "https://www.googleapis.com/compute/v1"


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def asset(
    asset_type: str,
    path: str,
    *,
    labels: Mapping[str, str] | None = None,
    location: str = ZONE,
    state: str | None = None,
    created: datetime | None = None,
    service: str = "compute.googleapis.com",
) -> dict[str, Any]:
    """One ResourceSearchResult as `gcloud asset search-all-resources --format=json` prints it
    (camelCase fields; `labels` absent when the resource has none)."""
    name = f"//{service}/{path}"
    result: dict[str, Any] = {
        "name": name,
        "assetType": asset_type,
        "project": PROJECT_NUMBER,
        "displayName": path.rsplit("/", 1)[-1],
        "location": location,
        "createTime": rfc3339(created or datetime.now(UTC) - timedelta(days=2)),
        "updateTime": rfc3339(datetime.now(UTC)),
        "parentFullResourceName": f"//cloudresourcemanager.googleapis.com/{PROJECT_NUMBER}",
        "parentAssetType": "cloudresourcemanager.googleapis.com/Project",
    }
    if labels is not None:
        result["labels"] = dict(labels)
    if state is not None:
        result["state"] = state
    return result


def instance(
    name: str,
    *,
    labels: Mapping[str, str] | None = None,
    status: str = "RUNNING",
    machine_type: str = "n2-standard-4",
    created: datetime | None = None,
    zone: str = ZONE,
) -> dict[str, Any]:
    """One Instance as `gcloud compute instances list --format=json` prints it: URLs for
    its zone and machine type, `creationTimestamp` with the offset Compute writes, network
    `tags` (not labels) as an object of items."""
    zone_url = f"{COMPUTE_V1}/projects/{PROJECT}/zones/{zone}"
    moment = (created or datetime.now(UTC) - timedelta(days=2)).astimezone(PACIFIC)
    entry: dict[str, Any] = {
        "kind": "compute#instance",
        "id": "7312294612745210001",
        "creationTimestamp": moment.isoformat(timespec="milliseconds"),
        "name": name,
        "tags": {"items": ["ssh"], "fingerprint": "42WmSpB8rSM="},
        "machineType": f"{zone_url}/machineTypes/{machine_type}",
        "status": status,
        "zone": zone_url,
        "disks": [
            {
                "kind": "compute#attachedDisk",
                "type": "PERSISTENT",
                "mode": "READ_WRITE",
                "source": f"{zone_url}/disks/{name}",
                "boot": True,
                "autoDelete": True,
                "diskSizeGb": "10",
            }
        ],
        "selfLink": f"{zone_url}/instances/{name}",
        "labelFingerprint": "42WmSpB8rSM=",
    }
    if labels is not None:
        entry["labels"] = dict(labels)
    return entry


def cli(*args: str) -> Any:
    """`cloudguard audit ARGS` in-process (.exit_code, .stdout, .stderr)."""
    app = typer.Typer()

    @app.callback()
    def main() -> None:  # a group, so the command is invoked as `audit`, as users do
        pass

    register_audit(app)
    return CliRunner().invoke(app, ["audit", *args], env={"COLUMNS": "1000"})


_GIT_ENV = {
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def make_repo(root: Path, files: Mapping[str, str]) -> str:
    """A real repository with `files` committed; its head's sha."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | _GIT_ENV
    env["HOME"] = str(root.parent)

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, env=env, check=True
        )
        return done.stdout.strip()

    root.mkdir(parents=True)
    git("init", "-q", "-b", "main")
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    git("add", "-A")
    git("commit", "-q", "-m", "tests")
    return git("rev-parse", "HEAD")


def controller_home(root: Path, *, meta: tuple[str, ...] = ()) -> Path:
    for sub in ("state", "queue", "workers"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for task in meta:
        (root / "state" / f"{task}.meta").write_text("phase=running\n")
    return root


def victim_key(path: Path, token_uri: str) -> Path:
    """A real-looking service-account key: a real RSA key, Google's field names; its token
    endpoint is the listener's, so anything that used it would show there."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    path.write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": PROJECT,
                "private_key_id": "4d1a0c1f0b3e4c7a9e2f6b8d0c1e2f3a4b5c6d7e",
                "private_key": pem,
                "client_email": f"fleet-auditor@{PROJECT}.iam.gserviceaccount.com",
                "client_id": "104523948112345678901",
                "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                "token_uri": token_uri,
                "universe_domain": "googleapis.com",
            }
        )
    )
    return path

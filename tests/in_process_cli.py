"""`cloudguard audit` and `cloudguard reap ...` in-process, as users invoke them: the adapters'
reaper tests drive the CLI through this one helper (.exit_code, .output), and approve a plan
by its `digest`."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from cloudguard.cli.audit import register_audit
from cloudguard.cli.reap import app as reap_app


def cli(*args: str) -> Any:
    app = typer.Typer()

    @app.callback()
    def main() -> None:  # a group, so commands are invoked as users do
        pass

    register_audit(app)
    app.add_typer(reap_app, name="reap")
    # A wide terminal: rich would wrap a usage error box at the temp path's length.
    return CliRunner(env={"COLUMNS": "1000"}).invoke(app, list(args))


def digest(plan: Path) -> str:
    """What `reap apply --approve` takes for `plan`: its sha256."""
    return "sha256:" + hashlib.sha256(plan.read_bytes()).hexdigest()

"""The whole `cloudguard` command, in-process, as a user types it."""

from __future__ import annotations

from typing import Any

import typer
from typer.testing import CliRunner

# Wide enough that rich never wraps a message across the lines tests read.
WIDE: dict[str, str | None] = {"COLUMNS": "400"}


def cloudguard_app() -> typer.Typer:
    from cloudguard import cli

    if not getattr(cli, "_registered_for_tests", False):
        cli._register_audit()
        cli._register_reap()
        cli._register_history()
        cli._registered_for_tests = True  # type: ignore[attr-defined]
    return cli.app


def cloudguard(*args: str, env: dict[str, str | None] | None = None) -> Any:
    """`cloudguard ARGS`; the result has .exit_code, .stdout, .stderr, .output."""
    # env: a None value unsets the variable for the call.
    merged: dict[str, str | None] = {**WIDE, **(env or {})}
    return CliRunner().invoke(cloudguard_app(), list(args), env=merged)

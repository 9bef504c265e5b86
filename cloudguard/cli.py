"""The `cloudguard` command: parses, wires, prints. The work lives in the modules it calls."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="cloudguard",
    help="Keep test suites from reaching real clouds; find the resources they leaked.",
    no_args_is_help=True,
    add_completion=False,
)


def _register() -> None:
    # Imported here, not at module scope, so each command pays only for itself.
    from cloudguard.audit.command import audit

    app.command("audit")(audit)


def main() -> None:
    _register()
    app()

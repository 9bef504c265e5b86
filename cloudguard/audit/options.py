"""Options shared by `cloudguard audit` and `cloudguard reap apply`, and the config they read.

Both commands name a live provider's credential and endpoint the same way and
read the same `[audit]` table of cloudguard.toml, so an operator configures
the sweep once and reaps with the same settings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from cloudguard import exit_codes
from cloudguard.audit import config as cfg

LIVE = "Live providers"
EVIDENCE = "Evidence"
REPORT = "Report"

Credential = Annotated[
    str | None,
    typer.Option(metavar="NAME", help="Use this credential (by name).", rich_help_panel=LIVE),
]
ManagementEndpoint = Annotated[
    str | None,
    typer.Option(metavar="URL", help="Management endpoint override.", rich_help_panel=LIVE),
]
CaBundle = Annotated[
    str | None,
    typer.Option(metavar="FILE", help="CA bundle for the endpoint.", rich_help_panel=LIVE),
]
Retries = Annotated[
    int | None,
    typer.Option(
        min=1,
        metavar="N",
        help="Retry budget: retries per request on throttling (429), 5xx, connection resets "
        "and timeouts, with backoff; Retry-After is honoured (default: 10).",
        rich_help_panel=LIVE,
    ),
]
ConfigFile = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        metavar="FILE",
        help="Config file whose \\[audit] table supplies these options "
        "(default: the nearest cloudguard.toml up to the repository root, then $HOME; "
        "only your own file, not writable by others).",
    ),
]


def config_values(explicit: Path | None, command: str) -> dict[str, Any]:
    """The validated [audit] table of `explicit` or the nearest cloudguard.toml; 97 if invalid."""
    try:
        path = explicit if explicit is not None else cfg.find_config(Path.cwd())
        if path is None:
            return {}
        if explicit is not None and not explicit.is_file():
            raise cfg.ConfigError(str(explicit), "--config file does not exist")
        return cfg.load_config(path)
    except cfg.ConfigError as exc:
        typer.echo(f"cloudguard {command}: invalid config: {exc}", err=True)
        raise typer.Exit(exit_codes.REFUSED_ADMISSION) from exc


Engine = Annotated[
    str | None,
    typer.Option(
        metavar="auto|arm|resource-graph",
        help="Azure: sweep with per-subscription ARM listings or with Resource Graph "
        "(default auto: Resource Graph above 100 subscriptions).",
        rich_help_panel=LIVE,
    ),
]
AccountsFrom = Annotated[
    str | None,
    typer.Option(
        metavar="organizations",
        help="AWS: sweep every active account of the organization (needs --assume-role).",
        rich_help_panel=LIVE,
    ),
]
AssumeRole = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        help="AWS: role assumed in each member account (arn:aws:iam::<id>:role/NAME).",
        rich_help_panel=LIVE,
    ),
]


def check_accounts_from(accounts_from: str | None, assume_role: str | None) -> None:
    """--accounts-from and --assume-role go together; either alone is a usage error (2)."""
    if accounts_from is not None and not assume_role:
        raise typer.BadParameter(
            "--accounts-from organizations needs --assume-role NAME: the role to assume in "
            "each member account",
            param_hint="--assume-role",
        )
    if assume_role and accounts_from is None:
        raise typer.BadParameter(
            "--assume-role is used with --accounts-from organizations", param_hint="--assume-role"
        )

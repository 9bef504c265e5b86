"""`cloudguard adapters`: what is installed to sweep and reap which cloud, and whether it loads.

One line per `cloudguard.adapters` entry point: the provider name `--provider`
takes, the distribution and version that registered it, the options it adds
to `audit` (and to `[audit]`), and whether it loads, or why not. An adapter
that cannot load sweeps nothing and reaps nothing (its `Cloud` says why): this
is where an operator sees that before an audit says so.

Exit codes: 0 listed (none installed is said, with how to install one).
"""

from __future__ import annotations

import typer

from cloudguard.cloud.adapter_registry import Clouds, adapter_distributions, installed_adapters
from cloudguard.escape import one_line


def register(app: typer.Typer) -> None:
    app.command(
        help="List the installed cloud adapters: provider name, distribution, version, the "
        "options each adds to audit, and whether it loads. Exit: 0."
    )(adapters)


def adapters() -> None:
    entry_points = installed_adapters()
    if not entry_points:
        known = ", ".join(
            f"pip install 'cloudguard-ci[{name}]'" for name in sorted(adapter_distributions())
        )
        typer.echo(f"no cloud adapter is installed ({known or 'none known'})")
        return
    clouds = Clouds(entry_points)
    # Whether it loads goes last: a reason it does not can be long.
    rows = [("provider", "distribution", "version", "options", "loads")]
    for name in clouds.names:
        dist = entry_points[name].dist
        cloud = clouds.cloud(name)
        rows.append(
            (
                name,
                dist.name if dist is not None else "?",
                dist.version if dist is not None else "?",
                ", ".join(o.flag for o in cloud.options) or "-",
                "yes" if cloud.adapter is not None else f"no: {cloud.unavailable}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        padded = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        typer.echo("  ".join([*padded, one_line(row[-1], 300)]))

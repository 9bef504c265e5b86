"""What `cloudguard history` prints: the store's answers as tables for a person, or JSON.

Names and ids come from the cloud (whoever created the resource wrote them)
and are shown escaped and shortened; JSON keeps exact values.
"""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from cloudguard.escape import one_line
from cloudguard.history.store_records import (
    MonthCost,
    Offender,
    ResourceTimeline,
    RunSummary,
)

HISTORY_SCHEMA = "cloudguard.history"
HISTORY_SCHEMA_VERSION = 1


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, title: str = "") -> str:
    """A plain aligned table (rich draws it; no colour, no wrapping of long cells)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    out = io.StringIO()
    console = Console(file=out, no_color=True, highlight=False, width=1000)
    if title:
        console.print(Text(title), soft_wrap=True)
    if rows:
        grid = Table()
        for header in headers:
            grid.add_column(header, overflow="fold", no_wrap=True)
        for row in rows:
            grid.add_row(*(Text(cell) for cell in row))
        console.print(grid)
    return out.getvalue()


def when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def amount(value: float, currency: str) -> str:
    return f"{value:,.2f} {currency}".strip()


def runs(summaries: Sequence[RunSummary]) -> str:
    rows = [
        [
            str(run.id),
            when(run.at),
            run.kind,
            one_line(run.scope, 60) if run.kind == "audit" else "-",
            str(run.exit_code) + ("" if run.complete else " (incomplete)"),
            str(run.findings),
            *(
                (
                    str(run.new),
                    str(run.back),
                    str(run.gone),
                    str(run.leaking),
                    str(run.acknowledged),
                )
                if run.kind == "audit"
                else ("-",) * 5
            ),
            amount(run.leaked_accrued, run.currency) if run.kind == "audit" else "-",
            one_line(run.host, 40),
        ]
        for run in summaries
    ]
    headers = ("run", "at", "kind", "scope", "exit", "findings/actions", "new", "back", "gone",
               "leaking", "acknowledged", "leaked cost since previous", "host")  # fmt: skip
    title = f"{len(summaries)} most recent run(s), newest first" if summaries else "no runs yet"
    return table(headers, rows, title=title)


def timelines(found: Sequence[ResourceTimeline], resource_id: str) -> str:
    if not found:
        return f"no resource {one_line(resource_id, 300)} in the history\n"
    parts = []
    for resource in found:
        gone = f", gone ({resource.gone_how})" if resource.status == "gone" else ", present"
        title = (
            f"{one_line(resource.name, 80)} ({resource.provider} {one_line(resource.account, 40)}"
            f"{', uid ' + one_line(resource.uid, 60) if resource.uid else ''}): "
            f"first seen {when(resource.first_seen)}, last seen {when(resource.last_seen)}"
            f"{gone}; back {resource.returns} time(s); task {one_line(resource.task_id, 60)}; "
            f"{resource.observed_hours:,.1f} billable hours observed, "
            f"{resource.accrued:,.2f} accrued"
        )
        rows = [
            [
                when(entry.at),
                str(entry.run_id),
                entry.kind,
                entry.what,
                entry.change,
                f"{entry.hours:,.1f}" if entry.kind == "audit" else "-",
                f"{entry.accrued:,.2f}" if entry.kind == "audit" else "-",
                one_line(entry.detail, 120) or "-",
            ]
            for entry in resource.entries
        ]
        headers = ("at", "run", "kind", "verdict/action", "change/outcome", "hours", "accrued",
                   "reasons/detail")  # fmt: skip
        parts.append(table(headers, rows, title=title))
    return "\n".join(parts)


def costs(months: Sequence[MonthCost]) -> str:
    rows = [
        [
            m.month,
            amount(m.leaked_accrued, m.currency),
            amount(m.accrued, m.currency),
            str(m.audits),
        ]
        for m in months
    ]
    title = (
        "Cost the audits observed accruing, per month (UTC): billable hours between two "
        "audits, at the earlier audit's price; leaked = while the verdict was leaking"
    )
    return table(("month", "leaked", "all findings", "audits"), rows, title=title)


def offenders(found: Sequence[Offender]) -> str:
    rows = [
        [
            one_line(o.task_id, 80),
            str(o.resources),
            str(o.leaking_observations),
            f"{o.leaked_accrued:,.2f}",
            when(o.first_seen),
            when(o.last_seen),
        ]
        for o in found
    ]
    headers = ("task id", "resources leaked", "leaking observations", "leaked cost",
               "first seen", "last seen")  # fmt: skip
    title = "Repeat offenders: task ids whose resources were found leaking, most resources first"
    return table(headers, rows, title=title if found else "no task id was ever found leaking")


def as_json(kind: str, records: Sequence[Any]) -> str:
    """`{"schema": "cloudguard.history", "schema_version": 1, "kind": ..., "items": [...]}`."""
    document = {
        "schema": HISTORY_SCHEMA,
        "schema_version": HISTORY_SCHEMA_VERSION,
        "kind": kind,
        "items": [_plain(dataclasses.asdict(record)) for record in records],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value

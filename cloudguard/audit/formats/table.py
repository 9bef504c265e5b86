"""The table: grouped by verdict, most urgent first, billable first within a group.

On a terminal (color) rich draws it to fit the terminal's width. Files,
pipes and CI logs, and terminals given a huge report, get plain aligned text,
one line per finding: rich laying out one table of 100,000 rows took
minutes. Column widths need every row, so the cells are made once and kept
(mostly references to the records' own strings) until written.
"""

from __future__ import annotations

import io
import shutil
from typing import TYPE_CHECKING, TextIO

from cloudguard.audit.formats import StreamedFormat
from cloudguard.audit.formats.changes import (
    change_text,
    history_lines,
    short_change,
    shows_changes,
)
from cloudguard.audit.formats.order import report_order
from cloudguard.audit.formats.rows import columns, report_cells
from cloudguard.audit.formats.summary import (
    evidence_lines,
    failure_lines,
    headline,
    price_line,
    warning_lines,
)
from cloudguard.audit.formats.text import age, one_line
from cloudguard.cloud.kinds import VM
from cloudguard.cloud.registry import installed_clouds
from cloudguard.documents.findings import AuditReport, Finding

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text

    from cloudguard.cloud.records import Resource

_STYLE = {"leaked": "bold red", "orphan": "bold red", "suspect": "yellow", "pending": "cyan"}
# Beyond this many findings even a terminal gets the plain table: a person
# greps a report that long rather than reads it, and rich would take minutes.
RICH_LIMIT = 2_000


class TableFormat(StreamedFormat):
    def write(self, report: AuditReport, out: TextIO, *, color: bool = False) -> None:
        if color and len(report.findings) <= RICH_LIMIT:
            out.write(self._rich(report))
        else:
            _write_plain(report, out)

    def _rich(self, report: AuditReport) -> str:
        # rich is imported here: the plain table (files, pipes, CI) does not pay for it.
        from rich.console import Console
        from rich.text import Text

        out = io.StringIO()
        console = Console(file=out, force_terminal=True, highlight=False)
        # Fit the terminal's width: a compact table, or one block per finding when
        # even that is too wide. Set after construction because COLUMNS would win.
        console.width = shutil.get_terminal_size().columns
        # Text(...) everywhere: a tag value must never be read as rich markup.
        console.print(Text(headline(report)), soft_wrap=True)
        for line in failure_lines(report):
            console.print(Text("UNREADABLE " + line, style="bold red"), soft_wrap=True)
        for line in warning_lines(report):
            console.print(Text("WARNING " + line, style="yellow"), soft_wrap=True)
        for line in evidence_lines(report):
            console.print(Text("evidence " + line), soft_wrap=True)
        for line in history_lines(report):
            console.print(Text(line, style="bold" if line.startswith("since") else ""))
        if report.findings:
            table = _terminal_table(report)
            natural = console.measure(table, options=console.options.update_width(100_000))
            if natural.maximum > console.width:
                # The terminal is too narrow for one line per finding: one block each.
                for finding in report_order(report.findings):
                    console.print(_card(report, finding), soft_wrap=True)
            else:
                console.print(table)
        console.print(Text(price_line(report)), soft_wrap=True)
        return out.getvalue()


def _terminal_table(report: AuditReport) -> Table:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    # A terminal: fewer, narrower columns without rules.
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for header in _terminal_columns(report):
        table.add_column(header, no_wrap=True)
    previous = None
    for f in report_order(report.findings):
        if previous is not None and f.verdict != previous:
            table.add_section()
        previous = f.verdict
        cells = _terminal_cells(report, f)
        table.add_row(*(Text(c) for c in cells), style=_STYLE.get(f.verdict, ""))
    return table


def _write_plain(report: AuditReport, out: TextIO) -> None:
    out.write(headline(report) + "\n")
    for line in failure_lines(report):
        out.write(f"UNREADABLE {line}\n")
    for line in warning_lines(report):
        out.write(f"WARNING {line}\n")
    for line in evidence_lines(report):
        out.write(f"evidence {line}\n")
    for line in history_lines(report):
        out.write(f"{line}\n")
    if report.findings:
        headers = columns(report)
        ordered = report_order(report.findings)
        rows = [report_cells(report, finding) for finding in ordered]
        widths = [
            max(len(header), *(len(row[i]) for row in rows)) for i, header in enumerate(headers)
        ]

        def aligned(cells: list[str] | tuple[str, ...]) -> str:
            # The rules rich drew, so `grep '│ orphan'` keeps working.
            return "│ " + " │ ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " │"

        rule = "├" + "┼".join("─" * (w + 2) for w in widths) + "┤\n"
        out.write(aligned(headers) + "\n" + rule)
        previous = None
        for finding, row in zip(ordered, rows, strict=True):
            if previous is not None and finding.verdict != previous:
                out.write(rule)  # one block per verdict
            previous = finding.verdict
            out.write(aligned(row) + "\n")
    out.write(price_line(report) + "\n")


def _terminal_columns(report: AuditReport) -> tuple[str, ...]:
    currency = report.prices.currency
    return (
        "verdict", "name", "kind", "where", "size", "power", f"{currency}/h", "accrued",
        "price from", "age", "task id", "generation", "reasons",
        *(("since last",) if shows_changes(report) else ()),
    )  # fmt: skip


def _terminal_cells(report: AuditReport, finding: Finding) -> list[str]:
    r, cost = finding.resource, finding.cost
    scope = _scope(r)  # the region is in the wide formats
    changed = [short_change(report, finding)] if shows_changes(report) else []
    return [
        finding.verdict,
        one_line(r.name, 40),
        one_line(r.kind, 32),
        one_line(scope, 48),
        one_line(r.size, 24),
        r.power_state if r.kind == VM else "-",
        _amount(cost.hourly, 4) if cost.billable is not False else "-",
        _amount(cost.accrued, 2) if cost.billable is not False else "-",
        _short(cost.source, 36) or "-",
        age(finding.age),
        one_line(finding.task_id, 40),
        _short(finding.generation, 12),
        "\n".join(finding.reasons) or "-",  # one a line: a reason is never split
        *changed,
    ]


def _card(report: AuditReport, finding: Finding) -> Text:
    from rich.text import Text

    currency = report.prices.currency
    cells = _terminal_cells(report, finding)
    (verdict, name, kind, where, size, power, hourly, accrued, source, age_, task, generation,
     reasons) = cells[:13]  # fmt: skip
    lines = [
        f"{verdict:<8}{name}  ({kind}, {where}, {size}, {power}, age {age_})",
        f"{'':<8}cost {hourly} {currency}/h, {accrued} {currency} accrued (prices: {source})"
        if finding.cost.billable
        else f"{'':<8}cost: {finding.cost.note}",
        f"{'':<8}task id {task} · generation {generation}",
        f"{'':<8}reasons: {reasons.replace(chr(10), ', ')}",
        *([f"{'':<8}since the last audit: {change_text(report, finding)}"] if cells[13:] else []),
    ]
    return Text("\n".join(lines) + "\n", style=_STYLE.get(finding.verdict, ""))


def _short(value: str | None, width: int) -> str:
    """Escaped, and cut to `width` with an ellipsis: the JSON report keeps the whole value."""
    text = one_line(value, 4 * width)
    return text if len(text) <= width else text[: width - 1] + "…"


def _amount(value: float | None, places: int) -> str:
    return "unknown" if value is None else f"{value:,.{places}f}"


def _scope(resource: Resource) -> str:
    """Where it lives, as its cloud shows it (an Azure resource group, an AWS account);
    the account when no adapter is installed for it."""
    return installed_clouds().cloud(resource.provider).scope_of(resource)

"""The table: grouped by verdict, most urgent first, billable first within a group.

On a terminal (color) rich draws it to fit the terminal's width. Files,
pipes and CI logs, and terminals given a huge report, get plain text: rich
laying out one table of 100,000 rows took minutes. Plain text fits a width
too: `$COLUMNS` when set, the terminal's when writing to one, else 120 (a
CI log viewer's). Every column on one line per finding when that fits, and
otherwise one block per finding (its verdict first, for `grep -A3 ^orphan`),
each line wrapped to the width. Column widths need every row, so the cells
are made once and kept (mostly references to the records' own strings)
until written.
"""

from __future__ import annotations

import io
import os
import shutil
import textwrap
from typing import TYPE_CHECKING, TextIO

from cloudguard.audit.formats import StreamedFormat
from cloudguard.audit.formats.changes import (
    change_text,
    history_lines,
    short_change,
    shows_changes,
)
from cloudguard.audit.formats.order import report_order
from cloudguard.audit.formats.rows import columns, cost_cells, report_cells
from cloudguard.audit.formats.summary import (
    evidence_lines,
    failure_lines,
    headline,
    price_line,
    warning_lines,
)
from cloudguard.audit.formats.text import age, one_line
from cloudguard.cloud.adapter_registry import installed_clouds
from cloudguard.cloud.kinds import VM
from cloudguard.documents.findings import AuditReport, Finding

if TYPE_CHECKING:
    from rich.table import Table

    from cloudguard.cloud.records import Resource

_STYLE = {"leaked": "bold red", "orphan": "bold red", "suspect": "yellow", "pending": "cyan"}
# Beyond this many findings even a terminal gets the plain table: a person
# greps a report that long rather than reads it, and rich would take minutes.
RICH_LIMIT = 2_000
# The width of plain text written to a file or a pipe, unless $COLUMNS says otherwise:
# what a CI log viewer shows without wrapping.
PLAIN_WIDTH = 120


class TableFormat(StreamedFormat):
    def write(self, report: AuditReport, out: TextIO, *, color: bool = False) -> None:
        if color and len(report.findings) <= RICH_LIMIT:
            out.write(self._rich(report))
        else:
            _write_plain(report, out, plain_width(out))

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
                    card = "\n".join(card_lines(report, finding)) + "\n"
                    console.print(Text(card, style=_STYLE.get(finding.verdict, "")))
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


def plain_width(out: TextIO) -> int:
    """How wide plain text may be: $COLUMNS, else the terminal's, else PLAIN_WIDTH."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) >= 40:
        return int(columns)
    try:
        return os.get_terminal_size(out.fileno()).columns if out.isatty() else PLAIN_WIDTH
    except (OSError, ValueError, io.UnsupportedOperation):
        return PLAIN_WIDTH


def _write_plain(report: AuditReport, out: TextIO, width: int) -> None:
    def line(text: str) -> None:
        out.write("\n".join(_wrapped(text, width, "  ")) + "\n")

    line(headline(report))
    for text in failure_lines(report):
        line(f"UNREADABLE {text}")
    for text in warning_lines(report):
        line(f"WARNING {text}")
    for text in evidence_lines(report):
        line(f"evidence {text}")
    for text in history_lines(report):
        line(text)
    if report.findings:
        headers = columns(report)
        ordered = report_order(report.findings)
        rows = [report_cells(report, finding) for finding in ordered]
        widths = [
            max(len(header), *(len(row[i]) for row in rows)) for i, header in enumerate(headers)
        ]
        if sum(widths) + 3 * len(widths) + 1 <= width:
            _write_aligned(headers, ordered, rows, widths, out)
        else:
            del rows  # a block per finding, made as it is written
            for finding in ordered:
                for text in card_lines(report, finding):
                    out.write("\n".join(_wrapped(text, width, " " * _INDENT)) + "\n")
                out.write("\n")
    line(price_line(report))


def _write_aligned(
    headers: tuple[str, ...],
    ordered: list[Finding],
    rows: list[list[str]],
    widths: list[int],
    out: TextIO,
) -> None:
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


def _wrapped(text: str, width: int, indent: str) -> list[str]:
    if len(text) <= width:
        return [text]
    return textwrap.wrap(
        text, width, subsequent_indent=indent, break_long_words=True, break_on_hyphens=False
    )


_INDENT = 11  # "unverified" and a space: every verdict lines up


def card_lines(report: AuditReport, finding: Finding) -> list[str]:
    """One finding as a block of lines, its verdict first: for a terminal too narrow for the
    table, and for plain text wider than its width."""
    cells = _terminal_cells(report, finding)
    (verdict, name, kind, where, size, power, _, _, _, age_, task, generation,
     reasons) = cells[:13]  # fmt: skip
    billable, hourly, accrued = cost_cells(
        finding.cost, report.prices.currency, finding.resource.kind
    )
    cost = f"billable {billable}, per hour {hourly}, accrued {accrued}"
    if finding.cost.billable is not True or finding.cost.hourly is None:
        cost += f" ({finding.cost.note})"
    elif finding.cost.source:  # whole: the card wraps, where the table's cell is cut
        cost += f" (prices: {one_line(finding.cost.source)})"
    pad = " " * _INDENT
    return [
        f"{verdict:<{_INDENT}}{name}  ({kind}, {where}, {size}, {power}, age {age_})",
        f"{pad}{cost}",
        f"{pad}task id {task} · generation {generation}",
        f"{pad}reasons: {reasons.replace(chr(10), ', ')}",
        *([f"{pad}since the last audit: {change_text(report, finding)}"] if cells[13:] else []),
    ]


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

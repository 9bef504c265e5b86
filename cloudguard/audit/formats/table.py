"""Terminal table (rich): grouped by verdict, most urgent first, billable first within a group."""

from __future__ import annotations

import io
import shutil

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from cloudguard.audit.findings import AuditReport, Finding
from cloudguard.audit.formats.order import report_order
from cloudguard.audit.formats.rows import COLUMNS, finding_cells
from cloudguard.audit.formats.summary import evidence_lines, failure_lines, headline, price_line
from cloudguard.audit.formats.text import age, one_line

_STYLE = {"leaked": "bold red", "orphan": "bold red", "suspect": "yellow", "pending": "cyan"}


class TableFormat:
    def render(self, report: AuditReport, *, color: bool = False) -> str:
        out = io.StringIO()
        console = Console(file=out, force_terminal=color, no_color=not color, highlight=False)
        # On a terminal (color), fit its width: a compact table, or one block per
        # finding when even that is too wide. Elsewhere (files, pipes, CI logs) one
        # line per finding, for grep: wide enough that nothing is cut; set after
        # construction because COLUMNS would win.
        fit = color
        console.width = shutil.get_terminal_size().columns if fit else 1000
        # Text(...) everywhere: a tag value must never be read as rich markup.
        console.print(Text(headline(report)), soft_wrap=True)
        for line in failure_lines(report):
            console.print(Text("UNREADABLE " + line, style="bold red"), soft_wrap=True)
        for line in evidence_lines(report):
            console.print(Text("evidence " + line), soft_wrap=True)
        if report.findings:
            table = self._table(report, fit=fit)
            natural = console.measure(table, options=console.options.update_width(100_000))
            if fit and natural.maximum > console.width:
                # The terminal is too narrow for one line per finding: one block each.
                for finding in report_order(report.findings):
                    console.print(_card(finding, report.prices.currency), soft_wrap=True)
            else:
                console.print(table)
        console.print(Text(price_line(report)), soft_wrap=True)
        return out.getvalue()

    def _table(self, report: AuditReport, *, fit: bool) -> Table:
        currency = report.prices.currency
        if fit:
            # A terminal: fewer, narrower columns without rules.
            table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
            for header in _terminal_columns(currency):
                table.add_column(header, no_wrap=True)
        else:
            # Files, pipes, CI logs: every column, one line per finding, for grep.
            table = Table()
            for header in COLUMNS:
                table.add_column(header, no_wrap=True, overflow="ellipsis")
        previous = None
        for f in report_order(report.findings):
            if previous is not None and f.verdict != previous:
                table.add_section()
            previous = f.verdict
            cells = _terminal_cells(f) if fit else finding_cells(f, currency)
            table.add_row(*(Text(c) for c in cells), style=_STYLE.get(f.verdict, ""))
        return table


def _terminal_columns(currency: str) -> tuple[str, ...]:
    return (
        "verdict", "name", "where", "size", "power", f"{currency}/h", "accrued",
        "age", "task id", "generation", "reasons",
    )  # fmt: skip


def _terminal_cells(finding: Finding) -> list[str]:
    r, cost = finding.resource, finding.cost
    scope = r.group if r.provider == "azure" else r.account  # the region is in the wide formats
    return [
        finding.verdict,
        one_line(r.name, 40),
        one_line(scope, 48),
        one_line(r.size, 24),
        r.power_state,
        _amount(cost.hourly, 4) if cost.billable else "-",
        _amount(cost.accrued, 2) if cost.billable else "-",
        age(finding.age),
        one_line(finding.task_id, 40),
        _short(finding.generation, 12),
        "\n".join(finding.reasons) or "-",  # one a line: a reason is never split
    ]


def _card(finding: Finding, currency: str) -> Text:
    verdict, name, where, size, power, hourly, accrued, age_, task, generation, reasons = (
        _terminal_cells(finding)
    )
    lines = [
        f"{verdict:<8}{name}  ({where}, {size}, {power}, age {age_})",
        f"{'':<8}cost {hourly} {currency}/h, {accrued} {currency} accrued"
        if finding.cost.billable
        else f"{'':<8}cost: {finding.cost.note}",
        f"{'':<8}task id {task} · generation {generation}",
        f"{'':<8}reasons: {reasons.replace(chr(10), ', ')}\n",
    ]
    return Text("\n".join(lines), style=_STYLE.get(finding.verdict, ""))


def _short(value: str | None, width: int) -> str:
    """Escaped, and cut to `width` with an ellipsis: the JSON report keeps the whole value."""
    text = one_line(value, 4 * width)
    return text if len(text) <= width else text[: width - 1] + "…"


def _amount(value: float | None, places: int) -> str:
    return "unknown" if value is None else f"{value:,.{places}f}"

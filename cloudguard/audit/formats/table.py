"""Terminal table (rich): grouped by verdict, most urgent first, billable first within a group."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table
from rich.text import Text

from cloudguard.audit.findings import AuditReport
from cloudguard.audit.formats.order import report_order
from cloudguard.audit.formats.rows import COLUMNS, finding_cells
from cloudguard.audit.formats.summary import evidence_lines, failure_lines, headline, price_line

_STYLE = {"leaked": "bold red", "orphan": "bold red", "suspect": "yellow", "pending": "cyan"}


class TableFormat:
    def render(self, report: AuditReport, *, color: bool = False) -> str:
        out = io.StringIO()
        console = Console(file=out, force_terminal=color, no_color=not color, highlight=False)
        # Wide enough for every cell (each is already shortened to one line), so
        # nothing is cut; set after construction because COLUMNS would win in it.
        console.width = 1000
        # Text(...) everywhere: a tag value must never be read as rich markup.
        console.print(Text(headline(report)), soft_wrap=True)
        for line in failure_lines(report):
            console.print(Text("UNREADABLE " + line, style="bold red"), soft_wrap=True)
        for line in evidence_lines(report):
            console.print(Text("evidence " + line), soft_wrap=True)
        if report.findings:
            console.print(self._table(report))
        console.print(Text(price_line(report)), soft_wrap=True)
        return out.getvalue()

    def _table(self, report: AuditReport) -> Table:
        table = Table(show_lines=False)
        for header in COLUMNS:
            table.add_column(header, no_wrap=True, overflow="ellipsis")
        currency = report.prices.currency
        previous = None
        for f in report_order(report.findings):
            if previous is not None and f.verdict != previous:
                table.add_section()
            previous = f.verdict
            cells = finding_cells(f, currency)
            table.add_row(*(Text(c) for c in cells), style=_STYLE.get(f.verdict, ""))
        return table

"""Markdown for a PR or issue comment: a summary and one table row per finding."""

from __future__ import annotations

from functools import lru_cache
from typing import TextIO

from cloudguard.audit.formats import StreamedFormat
from cloudguard.audit.formats.changes import history_lines
from cloudguard.audit.formats.order import report_order
from cloudguard.audit.formats.rows import columns, report_cells
from cloudguard.audit.formats.summary import (
    evidence_lines,
    failure_lines,
    headline,
    price_line,
    warning_lines,
)
from cloudguard.documents.findings import AuditReport
from cloudguard.escape import markdown_cell

# A cell that renders as exactly its value (cloudguard.escape: the guard's reports use it too).
cell = markdown_cell


class MarkdownFormat(StreamedFormat):
    def write(self, report: AuditReport, out: TextIO, *, color: bool = False) -> None:
        lines = ["## cloudguard audit", "", cell(headline(report)), ""]
        if report.failures:
            lines += ["**Could not read (the audit is incomplete):**", ""]
            lines += [f"- {cell(line)}" for line in failure_lines(report)] + [""]
        if report.warnings:
            lines += [f"- **warning:** {cell(line)}" for line in warning_lines(report)] + [""]
        lines += [f"- {cell(line)}" for line in evidence_lines(report)] + [""]
        lines += [f"- {cell(line)}" for line in history_lines(report)] + [""]
        out.write("\n".join(lines) + "\n")
        if report.findings:
            headers = columns(report)
            out.write("| " + " | ".join(headers) + " |\n")
            out.write("|" + "---|" * len(headers) + "\n")
            # Most cells repeat down a fleet's rows (a kind, a region, a price, the reasons):
            # each is escaped once. Half the time of a 100,000-row table was escaping.
            escaped = lru_cache(maxsize=1 << 16)(cell)
            for f in report_order(report.findings):
                row = [escaped(c) for c in report_cells(report, f)]
                if f.verdict in {"orphan", "leaked"}:
                    row[0] = f"**{row[0]}**"
                out.write("| " + " | ".join(row) + " |\n")
            out.write("\n")
        out.write(f"_{cell(price_line(report))}_\n")

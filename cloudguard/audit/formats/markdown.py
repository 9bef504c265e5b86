"""Markdown for a PR or issue comment: a summary and one table row per finding."""

from __future__ import annotations

from typing import TextIO

from cloudguard.audit.formats import StreamedFormat
from cloudguard.audit.formats.order import report_order
from cloudguard.audit.formats.rows import COLUMNS, finding_cells
from cloudguard.audit.formats.summary import (
    evidence_lines,
    failure_lines,
    headline,
    price_line,
    warning_lines,
)
from cloudguard.documents.findings import AuditReport

# Markdown punctuation that could start a link or an image (`![x](https://...)` in a tag
# would load a remote image in a PR comment) or undo our escapes; each gets a backslash.
_MARKDOWN_PUNCTUATION = ("\\", "|", "`", "[", "]", "(", ")", "!")


def cell(value: str) -> str:
    """A table cell that cannot end the row, open code, link, embed an image, or inject HTML."""
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for mark in _MARKDOWN_PUNCTUATION:  # the backslash first: it must not undo the others
        value = value.replace(mark, "\\" + mark)
    return value


class MarkdownFormat(StreamedFormat):
    def write(self, report: AuditReport, out: TextIO, *, color: bool = False) -> None:
        lines = ["## cloudguard audit", "", cell(headline(report)), ""]
        if report.failures:
            lines += ["**Could not read (the audit is incomplete):**", ""]
            lines += [f"- {cell(line)}" for line in failure_lines(report)] + [""]
        if report.warnings:
            lines += [f"- **warning:** {cell(line)}" for line in warning_lines(report)] + [""]
        lines += [f"- {cell(line)}" for line in evidence_lines(report)] + [""]
        out.write("\n".join(lines) + "\n")
        if report.findings:
            out.write("| " + " | ".join(COLUMNS) + " |\n")
            out.write("|" + "---|" * len(COLUMNS) + "\n")
            currency = report.prices.currency
            for f in report_order(report.findings):
                row = finding_cells(f, currency)
                if f.verdict in {"orphan", "leaked"}:
                    row[0] = f"**{f.verdict}**"
                out.write("| " + " | ".join(cell(c) for c in row) + " |\n")
            out.write("\n")
        out.write(f"_{cell(price_line(report))}_\n")

"""Report formats: each renders an `AuditReport` to text. The CLI picks one by name.

A format needs only `render`. One that can also `write` the report to a
stream, line by line as it formats it, does so for `--output` and stdout:
a fleet of 100,000 VMs is never held as one string (see `write_report`).

`FORMATS` is the one registry: `--format`'s validation, its help and the
`[audit] format` config key are all derived from it. Adding a format is one
module plus one entry here.

Also here (each in its own words, the first line of its docstring):

- `changes`: What changed since the last audit, in words: shared by the human formats.
- `html`: One self-contained HTML page: the summary, cost charts, and a sortable findings
  table.
- `json_report`: `--format json`: the audit report document
  (cloudguard.documents.audit_report), streamed.
- `junit`: JUnit XML for CI dashboards: one test case per fleet resource, one per
  unreadable source.
- `markdown`: Markdown for a PR or issue comment: a summary and one table row per finding.
- `order`: The order human reports list findings in: by verdict (most urgent first),
  billable first.
- `rows`: One finding as the cells of a human report row: shared by the table and markdown
  formats.
- `sarif`: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.
- `summary`: The few lines every human format opens with: counts, what was (not) checked,
  failures.
- `table`: The table: grouped by verdict, most urgent first, billable first within a
  group.
- `text`: Making untrusted values (tag values, names) safe for a one-line report cell.
"""

from __future__ import annotations

import importlib
import io
from dataclasses import dataclass
from typing import Protocol, TextIO

from cloudguard.documents.findings import AuditReport


class Format(Protocol):
    def render(self, report: AuditReport, *, color: bool = False) -> str: ...


class StreamedFormat:
    """A format that writes its report as it formats it; `render` collects the same text."""

    def write(self, report: AuditReport, out: TextIO, *, color: bool = False) -> None:
        raise NotImplementedError

    def render(self, report: AuditReport, *, color: bool = False) -> str:
        buffer = io.StringIO()
        self.write(report, buffer, color=color)
        return buffer.getvalue()


def write_report(fmt: Format, report: AuditReport, out: TextIO, *, color: bool = False) -> None:
    """`fmt`'s report on `out`: streamed when the format can, rendered whole otherwise."""
    write = getattr(fmt, "write", None)
    if write is not None:
        write(report, out, color=color)
    else:
        out.write(fmt.render(report, color=color))


@dataclass(frozen=True)
class FormatEntry:
    module: str  # imported on demand: `json` should not pay for rich
    attribute: str  # the `Format` class in it
    summary: str  # for --help


FORMATS: dict[str, FormatEntry] = {
    "table": FormatEntry("cloudguard.audit.formats.table", "TableFormat", "for a terminal or log"),
    "json": FormatEntry("cloudguard.audit.formats.json_report", "JsonFormat", "schema v2"),
    "markdown": FormatEntry("cloudguard.audit.formats.markdown", "MarkdownFormat", "for a PR"),
    "junit": FormatEntry("cloudguard.audit.formats.junit", "JunitFormat", "for CI"),
    "sarif": FormatEntry(
        "cloudguard.audit.formats.sarif", "SarifFormat", "SARIF 2.1.0, for code scanning"
    ),
    "html": FormatEntry(
        "cloudguard.audit.formats.html", "HtmlFormat", "one self-contained page with charts"
    ),
}
FORMAT_NAMES = tuple(FORMATS)


def get_format(name: str) -> Format:
    entry = FORMATS.get(name)
    if entry is None:
        raise ValueError(f"unknown format {name!r}")
    format_class = getattr(importlib.import_module(entry.module), entry.attribute)
    instance: Format = format_class()
    return instance

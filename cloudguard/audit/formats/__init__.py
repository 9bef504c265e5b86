"""Report formats: each renders an `AuditReport` to text. The CLI picks one by name.

A format needs only `render`. One that can also `write` the report to a
stream, line by line as it formats it, does so for `--output` and stdout:
a fleet of 100,000 VMs is never held as one string (see `write_report`).
"""

from __future__ import annotations

import io
from typing import Protocol, TextIO

from cloudguard.audit.findings import AuditReport


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


def get_format(name: str) -> Format:
    # Imported on demand: `json` should not pay for rich.
    if name == "table":
        from cloudguard.audit.formats.table import TableFormat

        return TableFormat()
    if name == "json":
        from cloudguard.audit.formats.json_report import JsonFormat

        return JsonFormat()
    if name == "markdown":
        from cloudguard.audit.formats.markdown import MarkdownFormat

        return MarkdownFormat()
    if name == "junit":
        from cloudguard.audit.formats.junit import JunitFormat

        return JunitFormat()
    raise ValueError(f"unknown format {name!r}")

"""Report formats: each renders an `AuditReport` to text. The CLI picks one by name."""

from __future__ import annotations

from typing import Protocol

from cloudguard.audit.findings import AuditReport


class Format(Protocol):
    def render(self, report: AuditReport, *, color: bool = False) -> str: ...


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

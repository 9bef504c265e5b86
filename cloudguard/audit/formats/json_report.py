"""`--format json`: the audit report document (cloudguard.documents.audit_report), streamed."""

from __future__ import annotations

from typing import TextIO

from cloudguard.audit.formats import StreamedFormat
from cloudguard.documents.audit_report import write_report
from cloudguard.documents.findings import AuditReport


class JsonFormat(StreamedFormat):
    def write(self, report: AuditReport, out: TextIO, *, color: bool = False) -> None:
        write_report(report, out)

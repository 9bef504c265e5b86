"""JSON report, schema `cloudguard.audit/1` (documented in docs/audit.md).

Bump SCHEMA_VERSION when a field is removed or changes meaning; adding a
field does not bump it. Values are exact (tag values are not shortened).

Written as it is encoded: the head of the document indented, then one
finding a line, each encoded by the C encoder (`indent=2` would force the
pure-Python one, which dominated a 100,000-VM report's time).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, TextIO

from cloudguard.audit.engine import exit_code
from cloudguard.audit.findings import VERDICTS, AuditReport, Finding
from cloudguard.audit.formats import StreamedFormat
from cloudguard.schemas import schema_id

SCHEMA = "cloudguard.audit"
SCHEMA_VERSION = 1


def report_document(report: AuditReport) -> dict[str, Any]:
    return {**report_head(report), "findings": [finding_document(f) for f in report.findings]}


def report_head(report: AuditReport) -> dict[str, Any]:
    """Everything but the findings."""
    billable = [f for f in report.findings if f.cost.billable]
    return {
        "$schema": schema_id("audit-report"),
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "generated_at": report.generated_at.isoformat(),
        "exit_code": exit_code(report),
        "policy": {
            "task_tag": report.policy.task_tag,
            "generation_tag": report.policy.generation_tag,
            "grace_seconds": int(report.policy.grace.total_seconds()),
            "leaked_by": [f"{k}={v}" for k, v in report.policy.leaked_by],
            "fail_on": report.policy.fail_on,
        },
        "evidence": dict(report.evidence_checked),
        "failures": [{"source": f.source, "reason": f.reason} for f in report.failures],
        "prices": {
            "as_of": report.prices.as_of,
            "currency": report.prices.currency,
            "basis": report.prices.basis,
        },
        "summary": {
            "resources": report.resources_seen,
            "untagged": report.untagged,
            "findings": len(report.findings),
            "by_verdict": {v: report.count(v) for v in VERDICTS},
            "billable": len(billable),
            "hourly": round(sum(f.cost.hourly or 0.0 for f in billable), 4),
            "accrued": round(sum(f.cost.accrued or 0.0 for f in billable), 2),
            "unpriced_billable": sum(1 for f in billable if f.cost.hourly is None),
            "power_unknown": sum(1 for f in report.findings if f.cost.billable is None),
        },
        "warnings": list(report.warnings),
    }


def finding_document(finding: Finding) -> dict[str, Any]:
    r = finding.resource
    return {
        "verdict": finding.verdict,
        "reasons": list(finding.reasons),
        "task_id": finding.task_id,
        "generation": finding.generation,
        "checks": {
            "controller_record": finding.checks.controller_record,
            "fixture_id": finding.checks.fixture_id,
            "generation": finding.checks.generation,
            "generation_detail": finding.checks.generation_detail,
        },
        "resource": {
            "provider": r.provider,
            "account": r.account,
            "region": r.region,
            "group": r.group,
            "id": r.id,
            "name": r.name,
            "kind": r.kind,
            "size": r.size,
            "power_state": r.power_state,
            "created": r.created.isoformat() if r.created else None,
            "tags": dict(r.tags),
            "source": r.source,
            "uid": r.uid,
        },
        "age_seconds": int(finding.age.total_seconds()) if finding.age is not None else None,
        "billable": finding.cost.billable,
        "cost": {
            "note": finding.cost.note,
            "hourly": finding.cost.hourly,
            "accrued": finding.cost.accrued,
            "currency": finding.cost.currency,
        },
    }


class JsonFormat(StreamedFormat):
    def write(self, report: AuditReport, out: TextIO, *, color: bool = False) -> None:
        head = json.dumps(report_head(report), indent=2, ensure_ascii=False)
        out.write(head[: head.rindex("}")].rstrip() + ',\n  "findings": [')
        _write_lines(out, (finding_document(f) for f in report.findings))
        out.write("]\n}\n")


def _write_lines(out: TextIO, documents: Iterable[dict[str, Any]]) -> None:
    encode = json.JSONEncoder(ensure_ascii=False).encode
    separator = "\n    "
    wrote = False
    for document in documents:
        out.write(separator)
        out.write(encode(document))
        separator, wrote = ",\n    ", True
    if wrote:
        out.write("\n  ")

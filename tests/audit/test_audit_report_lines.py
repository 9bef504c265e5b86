"""The JSON report's finding lines, joined from shared parts, are the findings' documents.

`FindingLines` writes each finding's line without building its document (for
speed); these tests hold every line byte for byte to what `json.dumps` writes
of `finding_document`, over findings that differ in every field a line holds,
and over findings that share parts (so a part encoded for one finding is never
written for another that states something else).
"""

from __future__ import annotations

import io
import json
from datetime import UTC, date, datetime, timedelta
from types import MappingProxyType
from typing import Any

import pytest

from cloudguard.acknowledgements import Ack, AckState
from cloudguard.cloud.records import Resource
from cloudguard.documents.audit_report import finding_document, write_report
from cloudguard.documents.findings import (
    AuditPolicy,
    AuditReport,
    Checks,
    Cost,
    Finding,
    ReportHistory,
    finding_key,
)
from cloudguard.history.store_records import BACK, NEW, STILL, FindingHistory

NOW = datetime(2026, 12, 1, 22, 0, tzinfo=UTC)
# `%` too: a line is a `%` template of its shared parts (escaped) and its own values.
HOSTILE = 'quote " backslash \\ escape \x1b[2J newline \n bidi \u202e ünïcödé 🚀 100% %s %%'
SUB = "5eb5c0de-0000-4000-8000-000000000000"


def _resource(n: int, **changed: Any) -> Resource:
    fields: dict[str, Any] = {
        "provider": "azure",
        "account": SUB,
        "region": "eastus",
        "group": "rg-ci",
        "id": f"/subscriptions/{SUB}/resourceGroups/rg-ci/providers/"
        f"Microsoft.Compute/virtualMachines/vm-{n}",
        "name": f"vm-{n}",
        "kind": "vm",
        "size": "Standard_D4as_v6",
        "power_state": "running",
        "created": NOW - timedelta(hours=n + 1, microseconds=n),
        "tags": {"task-id": f"task-{n}", "owner": "fleet"},
        "source": "/srv/exports/az.json",
        "uid": f"{n:08x}-2222-3333-4444-555555555555",
    }
    return Resource(**(fields | changed))


def _finding(resource: Resource, **changed: Any) -> Finding:
    cost = changed.pop("cost", Cost(True, "running: compute bills", 0.172, 1.5, "USD", "bundled"))
    fields: dict[str, Any] = {
        "resource": resource,
        "task_id": resource.tags.get("task-id"),
        "generation": "6c9b99b8d69c7712222d7e5e290e1be8e16e4d5e",
        "verdict": "orphan",
        "reasons": ("no-controller-record",),
        "checks": Checks("missing", "not-fixture", "commit", "commit"),
        "cost": cost,
        "age": NOW - resource.created if resource.created else None,
    }
    return Finding(**(fields | changed))


def _findings() -> list[Finding]:
    """Findings sharing most parts with the first, each differing in one of them."""
    same_parts = [_finding(_resource(n)) for n in range(3)]
    return [
        *same_parts,
        _finding(_resource(3, name=HOSTILE, id=f"/x/{HOSTILE}", uid="", source=HOSTILE,
                           tags={HOSTILE: HOSTILE, "": "", "n": 1, "f": 1.5, "none": None})),
        _finding(_resource(4, created=None, tags=MappingProxyType({"ci-run": "77"})),
                 task_id=None, generation=None, verdict="leaked",
                 reasons=("leaked-run-tag", "unknown-generation"), age=None,
                 checks=Checks("not-checked", "not-checked", "no-tag", "no generation tag"),
                 cost=Cost(None, "power state unknown", None, None, "USD", "")),
        _finding(_resource(5, account="other", region="westeurope", group=HOSTILE, kind="disk",
                           size="", power_state="unknown")),
        # Equal prices written differently (1 and 1.0), and prices JSON writes as words.
        _finding(_resource(6), cost=Cost(True, "running", 1, 2, "USD", "bundled")),
        _finding(_resource(7), cost=Cost(True, "running", 1.0, 2.0, "USD", "bundled")),
        _finding(_resource(8), cost=Cost(True, "running: compute bills", float("nan"),
                                         float("inf"), "EUR", HOSTILE)),
        _finding(_resource(9), cost=Cost(False, "deallocated: compute not billed", 0.0, None,
                                         "USD", "")),
        _finding(_resource(10), verdict="suspect", reasons=(), age=timedelta(seconds=-5)),
        _finding(_resource(11)),  # acknowledged, live
        _finding(_resource(12)),  # acknowledged, expired
    ]  # fmt: skip


def _history(findings: list[Finding]) -> ReportHistory:
    first = NOW - timedelta(days=3)
    said = {
        0: FindingHistory(STILL, first, "orphan", 48.004, 8.2561, 0),
        1: FindingHistory(STILL, first, "orphan", 47.0, 8.0, 0),  # shares 0's part
        2: FindingHistory(NEW, NOW, None, 0.0, 0.0, 0),
        3: FindingHistory(BACK, first, "pending", 1, 0, 2),
        5: FindingHistory(STILL, first, "orphan", float("nan"), 1e-9, 0),
        # Figures written once each: equal ones that are written apart (-0.0 and 0.0 after
        # 2's; 1.0 after 3's 1) and the same figure again (0's).
        6: FindingHistory(STILL, first, "orphan", -0.0, -0.0, 0),
        7: FindingHistory(STILL, first, "orphan", 48.004, 8.2561, 0),
        9: FindingHistory(STILL, first, "orphan", 1.0, 0.001, 0),
        11: FindingHistory(STILL, first, "orphan", 1.0, 0.5, 0),
    }  # the others: none said (a finding the history did not record)
    return ReportHistory("history.sqlite3", "scope", first, {
        finding_key(findings[n]): found for n, found in said.items()
    }, (), True)  # fmt: skip


def _report(with_history: bool) -> AuditReport:
    findings = _findings()
    until = date(2026, 12, 31)
    acknowledged = {
        finding_key(findings[11]): AckState(Ack(findings[11].resource.id, "ops", HOSTILE, until,
                                                 "cloudguard ack"), expired=False),
        finding_key(findings[12]): AckState(Ack(findings[12].resource.id, "ops", "done",
                                                 date(2026, 1, 1), "acks.toml"), expired=True),
    }  # fmt: skip
    return AuditReport(
        generated_at=NOW,
        policy=AuditPolicy(),
        findings=tuple(findings),
        resources_seen=len(findings),
        untagged=0,
        failures=(),
        history=_history(findings) if with_history else None,
        acknowledged=acknowledged,
    )


def _lines(report: AuditReport) -> list[str]:
    out = io.StringIO()
    write_report(report, out)
    text = out.getvalue()
    block = text[text.index('"findings": [') + len('"findings": [') : text.rindex("]")]
    return [line.strip().removesuffix(",") for line in block.strip().split("\n")]


@pytest.mark.parametrize("with_history", [True, False])
def test_every_line_is_the_findings_document_as_json_writes_it(with_history: bool) -> None:
    report = _report(with_history)
    lines = _lines(report)

    assert len(lines) == len(report.findings)
    for line, finding in zip(lines, report.findings, strict=True):
        assert line == json.dumps(finding_document(finding, report), ensure_ascii=False), (
            finding.resource.name
        )
    # The cases are what they claim: shared parts, and values that differ only in type.
    assert lines[0].split('"age_seconds"')[0] != lines[1].split('"age_seconds"')[0]
    assert '"hourly": 1, ' in lines[6] and '"hourly": 1.0, ' in lines[7]
    assert '"hourly": NaN, "accrued": Infinity' in lines[8]
    if with_history:
        assert '"observed_hours": -0.0, "accrued_observed": -0.0}' in lines[6]
        assert '"observed_hours": 1.0, "accrued_observed": 0.0}' in lines[9]
        assert '"observed_hours": 1, "accrued_observed": 0}' in lines[3]
    assert '"expired": true' in lines[12] and '"expired": false' in lines[11]


def test_an_empty_report_has_no_lines() -> None:
    report = AuditReport(NOW, AuditPolicy(), (), 0, 0, ())
    out = io.StringIO()
    write_report(report, out)
    assert json.loads(out.getvalue())["findings"] == []

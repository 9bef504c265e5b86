"""One finding as the cells of a human report row: shared by the table and markdown formats."""

from __future__ import annotations

from cloudguard.audit.formats.changes import change_text, shows_changes
from cloudguard.audit.formats.text import age, money, one_line
from cloudguard.cloud.kinds import VM
from cloudguard.documents.findings import AuditReport, Finding

COLUMNS = (
    "verdict", "name", "kind", "account / group", "region", "size", "power", "billable",
    "per hour", "accrued", "price from", "age", "task id", "generation", "reasons",
)  # fmt: skip
CHANGE_COLUMN = "since the last audit"


def columns(report: AuditReport) -> tuple[str, ...]:
    """The columns of `report`'s rows: what changed, when the report knows it."""
    return (*COLUMNS, CHANGE_COLUMN) if shows_changes(report) else COLUMNS


def report_cells(report: AuditReport, finding: Finding) -> list[str]:
    """One row of `report`: the finding's cells, and what changed when the report knows it."""
    cells = finding_cells(finding, report.prices.currency)
    if shows_changes(report):
        cells.append(change_text(report, finding))
    return cells


def finding_cells(finding: Finding, currency: str) -> list[str]:
    """Every cell escaped and shortened to one line: tag values are untrusted input."""
    r, cost = finding.resource, finding.cost
    vm = r.kind == VM
    if cost.billable is None:
        billable = "unknown (power state unknown)" if vm else "unknown (see the note)"
        hourly, accrued = "unknown", "unknown"
    elif cost.billable:
        billable = "yes"
        hourly, accrued = money(cost.hourly, currency), money(cost.accrued, currency)
    else:
        billable, hourly, accrued = "no (disks bill)" if vm else "no", "-", "-"
    return [
        finding.verdict,
        one_line(r.name, 40),
        one_line(r.kind, 40),
        one_line("/".join(p for p in (r.account, r.group) if p), 64),
        one_line(r.region, 20),
        one_line(r.size, 24),
        r.power_state if vm else "-",
        billable,
        hourly,
        accrued,
        one_line(cost.source, 60) or "-",
        age(finding.age),
        one_line(finding.task_id, 40),
        one_line(finding.generation, 16),
        ", ".join(finding.reasons) or "-",
    ]

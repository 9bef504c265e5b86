"""The few lines every human format opens with: counts, what was (not) checked, failures."""

from __future__ import annotations

from collections import Counter

from cloudguard.audit.formats.text import money, one_line
from cloudguard.documents.findings import VERDICTS, AuditReport, exit_code


def headline(report: AuditReport) -> str:
    counts = ", ".join(f"{report.count(v)} {v}" for v in VERDICTS if report.count(v))
    billable = [f for f in report.findings if f.cost.billable]
    hourly = sum(f.cost.hourly or 0.0 for f in billable)
    accrued = sum(f.cost.accrued or 0.0 for f in billable)
    unpriced = sum(1 for f in billable if f.cost.hourly is None)
    unknown = sum(1 for f in report.findings if f.cost.billable is None)
    currency = report.prices.currency
    status = "DID NOT RUN COMPLETELY" if report.failures else f"exit {exit_code(report)}"
    return (
        f"cloudguard audit: {status}. {report.resources_seen} resources, "
        f"{report.untagged} without the {report.policy.task_tag!r} tag (not the fleet's); "
        f"{counts or 'no fleet resources'}. {len(billable)} billable: "
        f"~{money(hourly, currency)}/h, ~{money(accrued, currency)} accrued"
        + (f" ({unpriced} of them unpriced, not in those sums)" if unpriced else "")
        + (f"; {unknown} more of unknown billing." if unknown else ".")
    )


def evidence_lines(report: AuditReport) -> list[str]:
    return [f"{kind}: {one_line(what, 200)}" for kind, what in report.evidence_checked.items()]


def failure_lines(report: AuditReport) -> list[str]:
    return [f"{one_line(f.source, 200)}: {one_line(f.reason, 300)}" for f in report.failures]


def warning_lines(report: AuditReport) -> list[str]:
    return [one_line(warning, 400) for warning in report.warnings]


def price_line(report: AuditReport) -> str:
    """Where the figures came from: each price list with the date it answered, and the
    bundled table, which only prices what no list did (the offline fallback)."""
    p = report.prices
    used = Counter(f.cost.source for f in report.findings if f.cost.source)
    fallback = f"the bundled table dated {p.as_of} (the offline fallback: {p.basis})"
    listed = [f"{count} from {one_line(source, 120)}" for source, count in used.items()]
    if not listed:
        return f"Prices: estimates in {p.currency} from {fallback}."
    return (
        f"Prices: estimates in {p.currency}: {'; '.join(listed)}. Figures from a price list "
        f"say its date; {fallback} prices only what no list did."
    )

"""The few lines every human format opens with: counts, what was (not) checked, failures."""

from __future__ import annotations

from collections import Counter

from cloudguard.audit.formats.text import money, one_line
from cloudguard.documents.audit_report import untrusted_policy_text
from cloudguard.documents.findings import VERDICTS, AuditReport, Spend, exit_code, spend


def headline(report: AuditReport) -> str:
    counts = ", ".join(f"{report.count(v)} {v}" for v in VERDICTS if report.count(v))
    status = "DID NOT RUN COMPLETELY" if report.failures else f"exit {exit_code(report)}"
    text = (
        f"cloudguard audit: {status}. {report.resources_seen} resources, "
        f"{report.untagged} without the {report.policy.task_tag!r} tag (not the fleet's); "
        f"{counts or 'no fleet resources'}. {spend_text(spend(report.findings), report)}."
    )
    whose = untrusted_policy_text(report.policy)
    return f"{text} {whose}" if whose else text


def spend_text(cost: Spend, report: AuditReport) -> str:
    """The billable count and the sums, and what is not in them: an unknown cost is said,
    never added in as zero."""
    currency = report.prices.currency
    priced = cost.billable - cost.unpriced
    # A sum of nothing known is unknown, not a zero ("~0.0000 USD/h" of an unpriced disk).
    if cost.billable and not priced:
        text = f"{cost.billable} billable: cost unknown"
    else:
        aged = priced - cost.age_unknown
        accrued = f"~{money(cost.accrued, currency)}" if aged or not priced else "unknown"
        text = f"{cost.billable} billable: ~{money(cost.hourly, currency)}/h, {accrued} accrued"
    left_out = []
    if cost.unpriced:
        left_out.append(f"{cost.unpriced} of unknown price in neither sum")
    if cost.age_unknown:
        left_out.append(f"{cost.age_unknown} of unknown age not in the accrued sum")
    if left_out:
        text += f" ({'; '.join(left_out)})"
    if cost.billing_unknown:
        text += f"; {cost.billing_unknown} more of unknown billing"
    return text


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

"""What changed since the last audit, in words: shared by the human formats.

Each finding says whether it is new, back again, or still there (since when,
and what it was observed to cost), and whose acknowledgement covers it, or
lapsed. The report opens with what changed as a whole and lists what is gone.
A report made without the history says so once, and no finding claims to be
new.
"""

from __future__ import annotations

from cloudguard.acknowledgements import AckState
from cloudguard.audit.formats.text import age, money, one_line
from cloudguard.documents.findings import AuditReport, Finding
from cloudguard.history.store_records import BACK, NEW, REAPED


def shows_changes(report: AuditReport) -> bool:
    """Whether the findings carry a "since the last audit" column at all."""
    return report.history is not None or bool(report.acknowledged)


def change_text(report: AuditReport, finding: Finding) -> str:
    """`new`, `back again`, `still there since … (…), … observed`; then the acknowledgement."""
    parts = []
    history = report.history_of(finding)
    if history is not None:
        if history.change == NEW:
            parts.append("new")
        elif history.change == BACK:
            parts.append("back again" + (f" ({history.returns}×)" if history.returns > 1 else ""))
        else:
            since = history.first_seen
            parts.append(
                f"still there since {since:%Y-%m-%d} ({age(report.generated_at - since)}), "
                f"{money(history.accrued, report.prices.currency)} observed"
            )
        if history.previous_verdict not in (None, finding.verdict):
            parts.append(f"was {history.previous_verdict}")
    state = report.ack_of(finding)
    if state is not None:
        parts.append(ack_text(state))
    return "; ".join(parts) or "-"


def ack_text(state: AckState) -> str:
    ack = state.ack
    who = f"{one_line(ack.owner, 40)}: {one_line(ack.reason, 120)}"
    if state.expired:
        return f"ACKNOWLEDGEMENT EXPIRED {ack.until.isoformat()} ({who})"
    return f"acknowledged until {ack.until.isoformat()} ({who})"


def short_change(report: AuditReport, finding: Finding) -> str:
    """A few characters for a terminal's compact table."""
    history = report.history_of(finding)
    word = ""
    if history is not None:
        word = {NEW: "new", BACK: "back"}.get(
            history.change, age(report.generated_at - history.first_seen)
        )
    state = report.ack_of(finding)
    if state is not None:
        word += " ACK EXPIRED" if state.expired else " ack'd"
    return word.strip() or "-"


def history_lines(report: AuditReport) -> list[str]:
    """What changed as a whole, then one line per resource gone since the last audit."""
    if report.history is None:
        return ["history: off (--no-history): nothing is known of earlier audits"]
    history = report.history
    counts: dict[str, int] = {}
    for found in history.findings.values():
        counts[found.change] = counts.get(found.change, 0) + 1
    acknowledged, expired = report.acknowledgements(), report.acknowledgements(expired=True)
    previous = (
        f"the previous audit of this scope was {history.previous_at:%Y-%m-%d %H:%M} UTC"
        if history.previous_at is not None
        else "the first audit of this scope"
    )
    gone = f"{len(history.gone)} gone" if history.gone_checked else "gone: not known (incomplete)"
    lines = [
        f"since the last audit: {counts.get(NEW, 0)} new, {counts.get(BACK, 0)} back again, "
        f"{counts.get('still', 0)} still there, {gone}; {acknowledged} acknowledged, "
        f"{expired} acknowledgement(s) expired ({previous}; scope "
        f"{one_line(history.scope, 80)}; history {one_line(history.store, 120)})"
    ]
    currency = report.prices.currency
    for resource in history.gone:
        how = "reaped" if resource.how == REAPED else "vanished"
        lines.append(
            f"gone ({how}): {one_line(resource.name, 60)} ({resource.provider} "
            f"{one_line(resource.account, 40)}), last {resource.last_verdict}, seen "
            f"{resource.first_seen:%Y-%m-%d} to {resource.last_seen:%Y-%m-%d}, "
            f"{money(resource.accrued, currency)} observed"
        )
    return lines

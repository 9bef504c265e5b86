"""What a notification says, before any channel's format: a few chosen fields per finding.

Nothing else of a finding is carried: not its tags (anyone who can create a
VM writes them, and teams put tokens in them), not where the evidence came
from (paths, command lines), not the reasons a source could not be read
(they quote exceptions). Every channel renders only this.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

# Why a finding is in a notification: the history's words for news.
from cloudguard.history.store_records import ACK_EXPIRED, BACK, NEW, NOW_FAILING

__all__ = ["ACK_EXPIRED", "BACK", "NEW", "NOW_FAILING", "Notification", "NotifiedFinding"]


@dataclass(frozen=True, slots=True)
class NotifiedFinding:
    why: str  # NEW | BACK | NOW_FAILING | ACK_EXPIRED
    verdict: str
    reasons: tuple[str, ...]
    name: str
    resource_id: str
    provider: str
    account: str
    kind: str
    task_id: str | None
    hourly: float | None
    accrued: float | None  # the audit's estimate since the resource was created
    first_seen: datetime | None  # by the history; None without one
    previous_verdict: str | None = None  # NOW_FAILING: what it was
    ack_owner: str | None = None  # ACK_EXPIRED: whose acknowledgement lapsed, why, when
    ack_reason: str | None = None
    ack_until: date | None = None


@dataclass(frozen=True)
class Notification:
    generated_at: datetime
    scope: str  # what the audit looked at
    exit_code: int
    currency: str
    new: tuple[NotifiedFinding, ...]  # NEW, BACK and NOW_FAILING findings
    expired: tuple[NotifiedFinding, ...]  # ACK_EXPIRED findings
    findings: int  # in the whole audit
    failing: int  # findings that fail the audit
    acknowledged: int  # findings under a live acknowledgement
    gone: int  # since the previous audit of the same scope

    @property
    def worth_sending(self) -> bool:
        return bool(self.new or self.expired)

    def title(self) -> str:
        parts = []
        if self.new:
            parts.append(f"{len(self.new)} new finding{'s' if len(self.new) != 1 else ''}")
        if self.expired:
            count = len(self.expired)
            parts.append(f"{count} acknowledgement{'s' if count != 1 else ''} expired")
        return f"cloudguard audit: {', '.join(parts) or 'nothing new'} (exit {self.exit_code})"

    def context(self) -> str:
        return (
            f"scope {self.scope}: {self.findings} findings, {self.failing} failing, "
            f"{self.acknowledged} acknowledged, {self.gone} gone since the last audit"
        )

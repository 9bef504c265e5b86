"""What the history store takes in and gives back: frozen records, no storage in sight.

A resource is known by its identity, never by fields of one kind of resource:
the adapter's name, the account, the cloud's id (as the cloud compares ids:
the caller folds the case where the cloud ignores it) and, when known, the
provider's unique id, which a resource deleted and re-created under the same
name does not share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

# What a finding's presence did since an audit last saw it.
NEW = "new"  # never observed before
STILL = "still"  # observed before, and not gone since
BACK = "back"  # observed before, then gone, and here again
GONE = "gone"  # observed by the previous audit of the same scope, not by this one
CHANGES = (NEW, BACK, STILL, GONE)

# Why a finding is news to a person (beside NEW and BACK): its verdict became one that
# fails the audit, or its acknowledgement expired since the previous audit.
NOW_FAILING = "now-failing"
ACK_EXPIRED = "acknowledgement-expired"

# How a gone resource went: a reap acted on it since it was last seen, or not.
REAPED = "reaped"
VANISHED = "vanished"

# Verdicts whose billable hours are a leak's cost (the audit's own words; the store
# keeps any verdict as a string and counts these apart).
LEAKING_VERDICTS = frozenset({"orphan", "leaked"})


# The records an audit makes one of per finding are named tuples: as immutable as a frozen
# dataclass, and several times cheaper to make (100,000 findings make 300,000 of them).


class ResourceKey(NamedTuple):
    provider: str
    account: str
    id: str  # compared exactly: folded by the caller where the cloud ignores case
    uid: str = ""  # the provider's unique id of this very resource, "" when unknown


class Observation(NamedTuple):
    """One finding of one audit, as the history keeps it (no tags: they may hold anything)."""

    key: ResourceKey
    display_id: str  # the id as the cloud printed it
    name: str
    kind: str
    task_id: str | None
    verdict: str
    reasons: tuple[str, ...]
    billable: bool | None  # None: unknown (no power state)
    hourly: float | None  # the price of the day; None: unknown


@dataclass(frozen=True)
class AuditRun:
    at: datetime  # when the audit looked (its report's generated_at), timezone-aware
    # What the audit was asked to look at: only an audit of the same scope can say that
    # a resource it did not see is gone.
    scope: str
    complete: bool  # every source was read: only then is "not seen" evidence of "gone"
    exit_code: int  # the audit's (with --fail-on new: as with orphan, whether anything failed)
    currency: str
    host: str = ""


class FindingHistory(NamedTuple):
    """What the history knew of one observed finding, this run included."""

    change: str  # NEW | STILL | BACK
    first_seen: datetime
    previous_verdict: str | None  # at the last observation before this run; None when new
    observed_hours: float  # billable hours between observations, this run's included
    accrued: float  # their cost, each interval at the price of its day
    returns: int  # how often it came back after being gone


@dataclass(frozen=True, slots=True)
class GoneResource:
    display_id: str
    provider: str
    account: str
    name: str
    kind: str
    task_id: str | None
    last_verdict: str
    first_seen: datetime
    last_seen: datetime
    how: str  # REAPED | VANISHED
    accrued: float


@dataclass(frozen=True)
class RecordedAudit:
    run_id: int
    previous_at: datetime | None  # the previous audit of the same scope, None for the first
    findings: dict[ResourceKey, FindingHistory]  # by the key each observation was given with
    gone: tuple[GoneResource, ...]
    # False when the run was incomplete: what it did not see may be in what it could not
    # read, so nothing was called gone.
    gone_checked: bool


@dataclass(frozen=True)
class ReapRun:
    at: datetime
    mode: str  # "apply" (a dry run acts on nothing and is not recorded)
    plan_digest: str
    exit_code: int
    host: str = ""


@dataclass(frozen=True, slots=True)
class ReapAction:
    key: ResourceKey
    display_id: str
    name: str
    kind: str
    action: str  # deallocate | stop | delete | terminate ...
    event: str  # done | failed | skipped | ...
    detail: str
    at: datetime


@dataclass(frozen=True, slots=True)
class RunSummary:
    id: int
    kind: str  # "audit" | "reap"
    scope: str
    at: datetime
    host: str
    exit_code: int
    complete: bool
    findings: int  # audit: findings observed; reap: actions recorded
    new: int
    back: int
    gone: int
    leaking: int  # findings with a leaking verdict
    accrued: float  # cost accrued since the previous observations, all findings
    leaked_accrued: float  # ... of findings that were leaking
    currency: str
    acknowledged: int  # findings under a live acknowledgement


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    at: datetime
    run_id: int
    kind: str  # "audit" | "reap"
    what: str  # audit: the verdict; reap: the action
    change: str  # audit: NEW | STILL | BACK; reap: the event (done, failed, skipped, ...)
    billable: bool | None = None
    hourly: float | None = None
    hours: float = 0.0
    accrued: float = 0.0
    detail: str = ""


@dataclass(frozen=True)
class ResourceTimeline:
    display_id: str
    provider: str
    account: str
    uid: str
    name: str
    kind: str
    task_id: str | None
    first_seen: datetime
    last_seen: datetime
    status: str  # "present" | GONE | "not audited" (only reaps acted on it here)
    gone_how: str | None
    returns: int
    observed_hours: float
    accrued: float
    entries: tuple[TimelineEntry, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class MonthCost:
    month: str  # YYYY-MM (UTC)
    currency: str
    leaked_accrued: float
    accrued: float
    audits: int


@dataclass(frozen=True, slots=True)
class DayTrend:
    day: str  # YYYY-MM-DD (UTC)
    leaking: int  # leaking findings at the day's last audit (of each scope, summed)
    leaked_accrued: float  # leaked cost accrued that day


@dataclass(frozen=True, slots=True)
class Offender:
    task_id: str
    resources: int  # distinct resources with this task id ever seen leaking
    leaking_observations: int
    leaked_accrued: float
    first_seen: datetime
    last_seen: datetime

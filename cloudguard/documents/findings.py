"""What an audit concludes: one `Finding` per fleet resource, gathered in an `AuditReport`.

Frozen records shared by classification, the auditor, the report formats and
the documents that write a report down and read it back (audit_report.py).
Stdlib and the cloud kernel's records only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any, NamedTuple

from cloudguard import exit_codes
from cloudguard.acknowledgements import AckState
from cloudguard.cloud.options import OptionValueError
from cloudguard.cloud.records import Resource, SourceFailure
from cloudguard.history.store_records import (
    ACK_EXPIRED,
    BACK,
    NEW,
    NOW_FAILING,
    DayTrend,
    FindingHistory,
    GoneResource,
    Offender,
)

# Verdicts, most urgent first (the order reports group them in).
LEAKED = "leaked"  # carries a --leaked-by tag after the run: the run leaked it
ORPHAN = "orphan"  # fleet-tagged, and no controller record explains it
SUSPECT = "suspect"  # a record exists, but the task id is a fixture or the generation no commit
PENDING = "pending"  # no record yet, but younger than --grace
UNVERIFIED = "unverified"  # no controller evidence was supplied: cannot tell
OK = "ok"  # the controller knows it (or a source owns its id) and nothing else is wrong
VERDICTS = (LEAKED, ORPHAN, SUSPECT, PENDING, UNVERIFIED, OK)

# Reasons: why a verdict is what it is.
NO_CONTROLLER_RECORD = "no-controller-record"
FIXTURE_TASK_ID = "fixture-task-id"
UNKNOWN_GENERATION = "unknown-generation"
UNVERIFIABLE_GENERATION = "unverifiable-generation"
LEAKED_RUN_TAG = "leaked-run-tag"
# An owned-id source (e.g. `owned-by-terraform-state`) owns the resource's cloud id.
OWNED_BY_PREFIX = "owned-by-"
REASONS = (
    NO_CONTROLLER_RECORD,
    FIXTURE_TASK_ID,
    UNKNOWN_GENERATION,
    UNVERIFIABLE_GENERATION,
    LEAKED_RUN_TAG,
)

# `--fail-on new`: fail only on orphans and leaked resources new since the last audit.
NEW_ONLY = "new"

# What each evidence check found for one resource. "not-checked" is its own
# state so a report can never show unsupplied evidence as passed.
NOT_CHECKED = "not-checked"


# A report holds one finding (with its checks and cost) per fleet resource: slotted records,
# and the two made per resource are named tuples (a third of a frozen dataclass's time to make).


@dataclass(frozen=True, slots=True)
class Checks:
    controller_record: str = NOT_CHECKED  # found | missing | not-checked
    fixture_id: str = NOT_CHECKED  # fixture | not-fixture | not-checked
    generation: str = NOT_CHECKED  # commit | not-a-commit | unverifiable | no-tag | not-checked
    generation_detail: str = ""


class Cost(NamedTuple):
    billable: bool | None  # None: the power state is unknown, so whether compute bills is too
    note: str  # why (not) billable, e.g. "deallocated: compute not billed; disks still are"
    hourly: float | None  # None: size not in the price table
    accrued: float | None  # hourly x hours since created; None when either is unknown
    currency: str
    # Where the hourly price came from: "<price list>, <date fetched>", or the bundled table
    # (the offline fallback); "" when there is no price.
    source: str = ""


class Finding(NamedTuple):
    resource: Resource
    task_id: str | None
    generation: str | None
    verdict: str
    reasons: tuple[str, ...]
    checks: Checks
    cost: Cost
    age: timedelta | None = None


@dataclass(frozen=True)
class AuditPolicy:
    """The knobs classification obeys (from options / cloudguard.toml)."""

    task_tag: str = "task-id"
    generation_tag: str = "repository-generation"
    grace: timedelta = timedelta(hours=2)
    leaked_by: tuple[tuple[str, str], ...] = ()
    fail_on: str = ORPHAN  # "orphan", "suspect" or "new" (NEW_ONLY)
    kinds: tuple[str, ...] = ()  # the kinds audited (`--kind`); empty: every kind
    # The kinds whose fleet resources must carry a generation tag (`--require-generation`):
    # the controller tags its VMs, while a Terraform module tags a NIC or a disk with the
    # task id alone, so a missing tag there is no evidence against it.
    require_generation: tuple[str, ...] = ("vm",)
    # A fleet resource no evidence source could judge fails the audit unless the operator
    # accepted that by name (--allow-unverified): an audit that lost its evidence (a
    # scheduled job whose controller home moved) must not go green.
    fail_on_unverified: bool = True
    # A discovered cloudguard.toml the operator never trusted, and the keys of it that
    # applied (`audit.grace`): keys that describe the fleet, so every report head and plan
    # names whose policy it was (docs/audit.md#configuration).
    untrusted_file: str | None = None
    untrusted_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class PriceTableInfo:
    as_of: str
    currency: str
    basis: str


FindingKey = tuple[str, str]  # provider, resource id: one finding of a report


def finding_key(finding: Finding) -> FindingKey:
    return finding.resource.provider, finding.resource.id


@dataclass(frozen=True)
class ReportHistory:
    """What the history store said of this audit (docs/history.md)."""

    store: str  # where it lives: a path, or a URL without its password
    scope: str  # what the audit looked at; only audits of one scope are compared
    previous_at: datetime | None  # the previous audit of the scope; None: the first
    findings: Mapping[FindingKey, FindingHistory]  # every finding's, by finding_key
    gone: tuple[GoneResource, ...]  # seen by the previous audit of the scope, not by this one
    gone_checked: bool  # False: the audit was incomplete, so nothing was called gone
    trend: tuple[DayTrend, ...] = ()  # leaking findings and leaked cost per day, recently
    offenders: tuple[Offender, ...] = ()  # the task ids whose resources leak most


class GroupOthers(NamedTuple):
    """What a resource group the audit has as a finding holds that is not the fleet's (no
    finding of its own): a reap plan never deletes such a group whole."""

    provider: str
    account: str
    group: str  # its name, as the resources in it name it
    held: int  # how many
    example: str  # one of them: its kind and id


@dataclass(frozen=True)
class AuditReport:
    generated_at: datetime
    policy: AuditPolicy
    findings: tuple[Finding, ...]  # fleet-tagged or leaked resources only
    resources_seen: int
    untagged: int  # resources without the task tag and not leaked: not the fleet's, only counted
    failures: tuple[SourceFailure, ...]
    evidence_checked: dict[str, str] = field(default_factory=dict)  # source kind -> what / why not
    prices: PriceTableInfo = PriceTableInfo("", "", "")
    # What the reader should know that is not a failure: duplicates counted once,
    # VMs whose cost is unknown. Printed on stderr and in every format.
    warnings: tuple[str, ...] = ()
    # Where the evidence was read from (a locating option's key -> its value, paths
    # absolute): a reap plan binds it, and `reap apply` must name the same.
    evidence_sources: Mapping[str, Any] = field(default_factory=dict)
    history: ReportHistory | None = None  # None: the audit ran without its history
    # The acknowledgement covering a finding (live or expired), by finding_key.
    acknowledged: Mapping[FindingKey, AckState] = field(default_factory=dict)
    # Per resource group that is a finding: what it holds that is not the fleet's.
    others_in_groups: tuple[GroupOthers, ...] = ()

    def count(self, verdict: str) -> int:
        return self._counts.get(verdict, 0)

    @cached_property
    def _counts(self) -> Counter[str]:
        # Every format asks for every verdict's count: one pass, not one per question.
        return Counter(f.verdict for f in self.findings)

    def acknowledgements(self, *, expired: bool = False) -> int:
        """How many findings an acknowledgement covers, live ones (or those expired)."""
        return sum(1 for state in self.acknowledged.values() if state.expired == expired)

    def history_of(self, finding: Finding) -> FindingHistory | None:
        return None if self.history is None else self.history.findings.get(finding_key(finding))

    def ack_of(self, finding: Finding) -> AckState | None:
        return self.acknowledged.get(finding_key(finding))


def failing_verdicts(policy: AuditPolicy) -> frozenset[str]:
    """The verdicts that fail the audit under `policy`: leaked and orphan always, suspect
    with fail-on suspect, unverified unless accepted (--allow-unverified); before
    acknowledgements."""
    failing = {LEAKED, ORPHAN}
    if policy.fail_on == SUSPECT:
        failing.add(SUSPECT)
    if policy.fail_on_unverified:
        failing.add(UNVERIFIED)
    return frozenset(failing)


def acknowledged(report: AuditReport, finding: Finding) -> bool:
    """Covered by a live acknowledgement: shown as such, and failing nothing."""
    state = report.ack_of(finding)
    return state is not None and not state.expired


def news(report: AuditReport, finding: Finding) -> str | None:
    """Why `finding` fails the audit now and did not when the previous audit of its scope
    looked: NEW, BACK (again), NOW_FAILING (its verdict became failing), ACK_EXPIRED (its
    acknowledgement expired since). None when it is no news, or the report cannot tell
    (it was made without the history)."""
    found = report.history_of(finding)
    failing_now = failing_verdicts(report.policy)
    if found is None or finding.verdict not in failing_now or acknowledged(report, finding):
        return None
    if found.change in (NEW, BACK):
        return found.change
    if found.previous_verdict not in failing_now:
        return NOW_FAILING
    state = report.ack_of(finding)
    previous = report.history.previous_at if report.history is not None else None
    if state is not None and (previous is None or state.ack.until >= previous.date()):
        return ACK_EXPIRED  # acknowledged through the end of `until`: lapsed after `previous`
    return None


def failing(report: AuditReport, finding: Finding) -> bool:
    """Whether `finding` fails the audit: a failing verdict, not acknowledged, and (with
    `--fail-on new`) news."""
    if report.policy.fail_on == NEW_ONLY:
        return news(report, finding) is not None
    return finding.verdict in failing_verdicts(report.policy) and not acknowledged(report, finding)


@dataclass(frozen=True)
class Spend:
    """What a set of findings costs, as far as it is known. Every report format shows these
    figures, so "unknown" is never added in as zero anywhere."""

    billable: int  # findings whose compute bills
    hourly: float  # the sum of the known hourly estimates of those
    accrued: float  # the sum of their known accrued estimates
    unpriced: int  # billable, but no price for its size: in neither sum
    age_unknown: int  # billable and priced, but its age unknown: in the hourly sum only
    billing_unknown: (
        int  # whether it bills is unknown (a VM's power state, a kind's own): in no figure above
    )

    @property
    def unknown(self) -> int:
        """Findings whose accrued cost is unknown, for any reason."""
        return self.unpriced + self.age_unknown + self.billing_unknown


def spend(findings: Iterable[Finding]) -> Spend:
    billable = unpriced = age_unknown = billing_unknown = 0
    hourly = accrued = 0.0
    for f in findings:
        cost = f.cost
        if cost.billable is None:
            billing_unknown += 1
        elif cost.billable:
            billable += 1
            if cost.hourly is None:
                unpriced += 1
                continue
            hourly += cost.hourly
            if cost.accrued is None:
                age_unknown += 1
            else:
                accrued += cost.accrued
    return Spend(billable, hourly, accrued, unpriced, age_unknown, billing_unknown)


def exit_code(report: AuditReport) -> int:
    """75 when any source was unreadable (even with orphans found: the audit is
    incomplete), 1 when a finding fails it (`failing`), else 0."""
    if report.failures:
        return exit_codes.DID_NOT_RUN
    if any(failing(report, f) for f in report.findings):
        return exit_codes.ORPHANS_FOUND
    return exit_codes.CLEAN


def parse_leaked_by(value: str) -> tuple[str, str]:
    """`KEY=VALUE`, as the command line, cloudguard.toml and the documents spell it."""
    key, sep, tag_value = value.partition("=")
    if not sep or not key.strip():
        raise OptionValueError(f"expected KEY=VALUE: {value!r}")
    return key.strip(), tag_value


def leaked_by_text(leaked_by: tuple[tuple[str, str], ...]) -> list[str]:
    return [f"{key}={value}" for key, value in leaked_by]

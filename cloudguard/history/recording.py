"""What recording one audit changes, worked out in memory: the store only reads and writes.

Given the resources the previous audits of the same scope left present, and
the latest incarnation of each other identity this audit observed, one
audit's observations become: new resources, rewritten ones, the ones seen as
they were (moved on in one statement), the observations worth storing, and
the ones now gone.

Presence: a resource never observed is NEW; one observed before is STILL,
or BACK when an audit had found it gone since. An audit that read every
source calls GONE each resource its scope's audits left present and it did
not see: REAPED when a reap acted on it since it was last seen, VANISHED
otherwise. An incomplete audit calls nothing gone: what it did not see may be
in what it could not read.

What is written: a nightly audit sees most of its fleet as the previous one
left it (the same verdict, reasons, price, name, task and scope). Such a
resource is STEADY: it gets no row of its own, only its share of one
statement that moves every steady resource on (last seen, hours and cost
observed). An observation row is stored when something changed, and holds
until the next one (`seen_until`); the audits in between are derived when a
timeline is asked for (see schema.py, version 3). An audit recorded out of
order (one that finished after a later one) stores every observation.

Cost: between two observations of a present resource, its billable state and
price at the first one are taken to hold until the second (the price of the
day): that interval's hours and cost are charged to the second observation,
and to leaked cost when the first one's verdict was leaking. Nothing is
charged across a gap in which the resource was gone, nor before it was first
seen (the audit's own "accrued" estimates that part from its creation time).

Identity: the adapter, account and cloud id; when both sides know the
provider's unique id and they differ, the resource was deleted and re-created
under the same id, and is another resource (NEW).

An audit that finishes after a later one (two audits at once) is recorded
in full, but cannot move a resource's state backwards: what it saw before the
later audit's observation changes nothing the later one set.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple

from cloudguard.history.store_records import (
    BACK,
    GONE,
    LEAKING_VERDICTS,
    NEW,
    REAPED,
    STILL,
    VANISHED,
    AuditRun,
    FindingHistory,
    GoneResource,
    Observation,
    RecordedAudit,
    ResourceKey,
)

PRESENT = "present"
Identity = tuple[str, str, str]  # provider, account, cloud id as compared


def epoch(moment: datetime) -> float:
    return moment.timestamp()


@lru_cache(maxsize=4096)  # the times a report shows are a few audits' (each finding's first seen)
def moment(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


@dataclass(slots=True)
class StoredResource:
    """One resource: its row of cloudguard_resources and of cloudguard_sightings (what a
    night moves on, SIGHTING_COLUMNS), its columns in RESOURCE_COLUMNS order."""

    id: int
    provider: str
    account: str
    match_id: str
    uid: str
    display_id: str
    name: str
    kind: str
    task_id: str | None
    first_seen: float
    last_seen: float
    last_run: int
    last_scope: str
    status: str
    gone_at: float | None
    gone_how: str | None
    returns: int
    verdict: str
    billable: int | None
    hourly: float | None
    observed_hours: float
    accrued: float
    leaked_accrued: float
    leaking_observations: int
    reasons: str | None  # of its last observation (None: recorded before schema version 3)

    @property
    def identity(self) -> Identity:
        return self.provider, self.account, self.match_id


class PresentResource(NamedTuple):
    """What the store reads of each resource its scope's audits left present: enough to tell
    whether this audit saw it as it was, and what to tell the report if so."""

    id: int
    provider: str
    account: str
    match_id: str
    uid: str
    display_id: str
    name: str
    kind: str
    task_id: str | None
    verdict: str
    reasons: str | None
    billable: int | None
    hourly: float | None
    first_seen: float
    last_seen: float
    returns: int
    observed_hours: float
    accrued: float
    leaked_accrued: float
    leaking_observations: int


RESOURCE_COLUMNS = tuple(StoredResource.__dataclass_fields__)
PRESENT_COLUMNS = PresentResource._fields
# What a night moves on, in cloudguard_sightings (schema version 4); the rest of a resource
# is in cloudguard_resources. Both are keyed by the resource's id.
SIGHTING_COLUMNS = (
    "last_seen", "last_run", "observed_hours", "accrued", "leaked_accrued",
    "leaking_observations",
)  # fmt: skip
KEPT_COLUMNS = tuple(c for c in RESOURCE_COLUMNS if c not in SIGHTING_COLUMNS)
# Rewritten by an observation that changed something: everything but the identity, then the id.
OBSERVED_COLUMNS = tuple(
    c for c in KEPT_COLUMNS if c not in {"id", "provider", "account", "match_id"}
)
GONE_COLUMNS = ("status", "gone_at", "gone_how")
resource_row = attrgetter(*KEPT_COLUMNS)
sightings_row = attrgetter("id", *SIGHTING_COLUMNS)
observed_row = attrgetter(*OBSERVED_COLUMNS, "id")
moved_row = attrgetter(*SIGHTING_COLUMNS, "id")
gone_row = attrgetter(*GONE_COLUMNS, "id")
OBSERVATION_COLUMNS = (
    "run_id",
    "resource_id",
    "verdict",
    "reasons",
    "change",
    "billable",
    "hourly",
    "hours",
    "accrued",
    "interval_leaking",
    "seen_until",
)


@dataclass
class AuditWrite:
    """Rows to write for one audit's observations, and what the report is told."""

    new_resources: list[StoredResource] = field(default_factory=list)
    observed: list[StoredResource] = field(default_factory=list)  # known ones, rewritten
    steady: list[int] = field(default_factory=list)  # ids of those seen as they were
    # Their rows of cloudguard_sightings as this audit leaves them (SIGHTING_COLUMNS, then
    # the id): moved on to this audit, each interval charged as the resource's row says.
    moved_on: list[tuple[float, int, float, float, float, int, int]] = field(default_factory=list)
    # (seen_until, resource id): where the stored observation each moved resource held ends.
    closed: list[tuple[float, int]] = field(default_factory=list)
    observations: list[tuple[object, ...]] = field(default_factory=list)
    findings: dict[ResourceKey, FindingHistory] = field(default_factory=dict)
    # By resource id: what a resource observed twice (under two keys) is told the second time.
    told: dict[int, FindingHistory] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys((NEW, BACK), 0))
    leaking: int = 0
    accrued: float = 0.0
    leaked_accrued: float = 0.0

    def charge(self, verdict: str, cost: float, interval_leaking: bool) -> None:
        """Count one observation: its verdict, and the cost of the interval it closes."""
        self.leaking += verdict in LEAKING_VERDICTS
        self.accrued += cost
        if interval_leaking:
            self.leaked_accrued += cost

    def recorded(
        self, run_id: int, run: AuditRun, previous_at: float | None, gone: list[StoredResource]
    ) -> RecordedAudit:
        return RecordedAudit(
            run_id=run_id,
            previous_at=moment(previous_at) if previous_at is not None else None,
            findings=self.findings,
            gone=tuple(_gone_record(resource) for resource in gone),
            gone_checked=run.complete,
        )


def same_resource(stored_uid: str, observed_uid: str) -> bool:
    """Unless both unique ids are known and differ, it is the same resource."""
    return not (stored_uid and observed_uid and stored_uid != observed_uid)


def plan_steady(
    run: AuditRun,
    run_id: int,
    observations: Iterable[Observation],
    present: Sequence[tuple[Any, ...]],
) -> tuple[AuditWrite, list[Observation]]:
    """Those of `observations` that see a resource of `present` (the scope's, left present;
    rows in PRESENT_COLUMNS order) as it was, told and moved on in bulk; the other
    observations, for `plan_observations`.

    A steady resource's interval since it was last seen is charged as its row says
    (billable, at the price of that day; to its leaked cost when its verdict leaks)."""
    at = epoch(run.at)
    write = AuditWrite()
    # By cloud id alone while no two present resources share one (a fleet's ids name their
    # account): its provider and account compared after. Otherwise by identity.
    by_id = dict(zip(map(itemgetter(3), present), present, strict=True))
    by_identity: dict[Identity, tuple[Any, ...]] | None = None
    if len(by_id) < len(present):
        by_identity = {resource[1:4]: resource for resource in present}  # provider, account, id
        if len(by_identity) < len(present):  # one scope holds several incarnations of an id
            by_identity = {resource[1:4]: resource for resource in sorted(present)}  # the latest
    moved: list[Observation] = []  # seen otherwise: rewritten, with a row each
    others: list[Observation] = []
    findings, told, ids, moved_on = write.findings, write.told, write.steady, write.moved_on
    # One pass, the charge summed in the order of the observations as `write.charge` would
    # (the same floats), and each finding's history made in C (a NamedTuple's `__new__` is
    # a Python call per finding): 90,000 steady findings a night.
    leaking, accrued, leaked_accrued = 0, 0.0, 0.0
    find = by_id.get
    for observation in observations:
        # Unpacked, not read by name: a named tuple's field by name is a slower read.
        key, seen_display_id, seen_name, seen_kind, seen_task_id, seen_verdict, seen_reasons, \
            seen_billable, seen_hourly = observation  # fmt: skip
        provider, account, match_id, seen_uid = key
        if by_identity is None:
            stored = find(match_id)
            if stored is not None and (stored[1] != provider or stored[2] != account):
                stored = None
        else:
            stored = by_identity.get((provider, account, match_id))
        if stored is None:
            others.append(observation)
            continue
        (resource_id, _, _, _, uid, display_id, name, kind, task_id, verdict, reasons, billable,
         hourly, first_seen, last_seen, returns, was_observed, was_accrued, was_leaked,
         was_leaking) = stored  # fmt: skip
        # As it was: the same resource (its unique id, when the observation knows it; one
        # learnt is a change) with the same verdict, reasons, price, names and task.
        same = (
            seen_uid in ("", uid)
            and display_id == seen_display_id
            and name == seen_name
            and kind == seen_kind
            and task_id == seen_task_id
            and verdict == seen_verdict
            and reasons == " ".join(seen_reasons)
            and billable == seen_billable
            and hourly == seen_hourly
        )
        if not same:
            moved.append(observation)
            continue
        if resource_id in told:  # the same resource twice in one audit counts once
            findings[key] = told[resource_id]
            continue
        # Its interval since last seen, as `billed_interval` charges it.
        hours = (at - last_seen) / 3600 if billable else 0.0
        cost = hours * hourly if billable and hourly is not None else 0.0
        leaks = verdict in LEAKING_VERDICTS
        if leaks:
            leaking += 1
            leaked_accrued += cost
        accrued += cost
        observed_hours, resource_accrued = was_observed + hours, was_accrued + cost
        ids.append(resource_id)
        moved_on.append((
            at, run_id, observed_hours, resource_accrued,
            was_leaked + cost if leaks else was_leaked, was_leaking + leaks, resource_id,
        ))  # fmt: skip
        told[resource_id] = findings[key] = tuple.__new__(FindingHistory, (
            STILL, moment(first_seen), verdict, observed_hours, resource_accrued, returns,
        ))  # fmt: skip
    write.leaking, write.accrued, write.leaked_accrued = leaking, accrued, leaked_accrued
    return write, others + moved


def plan_observations(
    write: AuditWrite,
    run: AuditRun,
    run_id: int,
    observations: Iterable[Observation],
    known: Mapping[Identity, StoredResource],
    next_id: int,
) -> AuditWrite:
    """Add to `write` what `observations` change, one row each. `known`: the latest
    incarnation the history has of each identity observed."""
    at = epoch(run.at)
    latest = dict(known)
    for observation in observations:
        if observation.key in write.findings:
            continue  # the same resource twice in one audit counts once
        identity = (observation.key.provider, observation.key.account, observation.key.id)
        stored = latest.get(identity)
        seen_until: float | None = None  # the row holds until the resource is next moved
        if stored is None or not same_resource(stored.uid, observation.key.uid):
            stored = _new_resource(next_id, observation, run, run_id, at)
            next_id += 1
            write.new_resources.append(stored)
            change, previous_verdict, hours, cost, interval_leaking = NEW, None, 0.0, 0.0, False
        elif stored.id in write.told:  # the same resource under another key: counted once
            write.findings[observation.key] = write.told[stored.id]
            continue
        else:
            previous_verdict = stored.verdict
            write.observed.append(stored)
            if _moved_past(stored, at):
                seen_until = at  # it moves nothing: its row holds only here
            else:
                write.closed.append((stored.last_seen, stored.id))
            change, hours, cost, interval_leaking = _observe(stored, observation, run, run_id, at)
        latest[identity] = stored
        stored.leaking_observations += observation.verdict in LEAKING_VERDICTS
        write.observations.append(
            (run_id, stored.id, observation.verdict, " ".join(observation.reasons), change,
             _flag(observation.billable), observation.hourly, hours, cost, int(interval_leaking),
             seen_until)
        )  # fmt: skip
        write.told[stored.id] = write.findings[observation.key] = FindingHistory(
            change=change,
            first_seen=moment(stored.first_seen),
            previous_verdict=previous_verdict,
            observed_hours=stored.observed_hours,
            accrued=stored.accrued,
            returns=stored.returns,
        )
        if change != STILL:
            write.counts[change] += 1
        write.charge(observation.verdict, cost, interval_leaking)
    return write


def plan_gone(
    run: AuditRun,
    not_seen: Iterable[StoredResource],
    reaped_at: Mapping[Identity, list[float]],
) -> list[StoredResource]:
    """Which of the resources this scope's audits left present, and `run` did not see, are
    gone; `reaped_at`: when a reap acted on each identity (done)."""
    if not run.complete:
        return []
    at = epoch(run.at)
    gone = []
    for resource in not_seen:
        if resource.last_seen >= at:
            continue  # seen by a later audit than this one
        reaped = any(when >= resource.last_seen for when in reaped_at.get(resource.identity, ()))
        resource.status, resource.gone_at = GONE, at
        resource.gone_how = REAPED if reaped else VANISHED
        gone.append(resource)
    return gone


def _new_resource(
    resource_id: int, observation: Observation, run: AuditRun, run_id: int, at: float
) -> StoredResource:
    key = observation.key
    return StoredResource(
        id=resource_id,
        provider=key.provider,
        account=key.account,
        match_id=key.id,
        uid=key.uid,
        display_id=observation.display_id,
        name=observation.name,
        kind=observation.kind,
        task_id=observation.task_id,
        first_seen=at,
        last_seen=at,
        last_run=run_id,
        last_scope=run.scope,
        status=PRESENT,
        gone_at=None,
        gone_how=None,
        returns=0,
        verdict=observation.verdict,
        billable=_flag(observation.billable),
        hourly=observation.hourly,
        observed_hours=0.0,
        accrued=0.0,
        leaked_accrued=0.0,
        leaking_observations=0,
        reasons=" ".join(observation.reasons),
    )


def _moved_past(stored: StoredResource, at: float) -> bool:
    """Whether a later audit than the one at `at` already moved `stored` (recorded first)."""
    return at < stored.last_seen or (stored.gone_at is not None and at < stored.gone_at)


def _observe(
    stored: StoredResource, observation: Observation, run: AuditRun, run_id: int, at: float
) -> tuple[str, float, float, bool]:
    """Move `stored` to this observation; (change, hours, cost, interval leaking)."""
    stored.first_seen = min(stored.first_seen, at)
    if _moved_past(stored, at):
        return STILL, 0.0, 0.0, False
    hours = cost = 0.0
    interval_leaking = False
    if stored.status == GONE:
        change = BACK
        stored.returns += 1
    else:
        change = STILL
        hours, cost = billed_interval(stored.billable, stored.hourly, stored.last_seen, at)
        interval_leaking = bool(stored.billable) and stored.verdict in LEAKING_VERDICTS
    stored.observed_hours += hours
    stored.accrued += cost
    stored.leaked_accrued += cost if interval_leaking else 0.0
    stored.uid = stored.uid or observation.key.uid
    stored.display_id, stored.name, stored.kind = (
        observation.display_id,
        observation.name,
        observation.kind,
    )
    stored.task_id = observation.task_id
    stored.last_seen, stored.last_run, stored.last_scope = at, run_id, run.scope
    stored.status, stored.gone_at, stored.gone_how = PRESENT, None, None
    stored.verdict, stored.reasons = observation.verdict, " ".join(observation.reasons)
    stored.billable, stored.hourly = _flag(observation.billable), observation.hourly
    return change, hours, cost, interval_leaking


def billed_interval(
    billable: int | None, hourly: float | None, last_seen: float, at: float
) -> tuple[float, float]:
    """The hours a present resource billed since it was last seen, and their cost at the
    price it had then (the price of the day; an unknown price charges nothing)."""
    if not billable:
        return 0.0, 0.0
    hours = (at - last_seen) / 3600
    return hours, hours * hourly if hourly is not None else 0.0


def _flag(value: bool | None) -> int | None:
    return None if value is None else int(value)


def _gone_record(resource: StoredResource) -> GoneResource:
    return GoneResource(
        display_id=resource.display_id,
        provider=resource.provider,
        account=resource.account,
        name=resource.name,
        kind=resource.kind,
        task_id=resource.task_id,
        last_verdict=resource.verdict,
        first_seen=moment(resource.first_seen),
        last_seen=moment(resource.last_seen),
        how=resource.gone_how or VANISHED,
        accrued=resource.accrued,
    )

"""What recording one audit changes, worked out in memory: the store only reads and writes.

Given the resources the history already knows (the latest incarnation of each
identity this audit observed) and those the previous audits of the same scope
left present, one audit's observations become: new resources, updated ones,
one observation row each, and the ones now gone.

Presence: a resource never observed is NEW; one observed before is STILL,
or BACK when an audit had found it gone since. An audit that read every
source calls GONE each resource its scope's audits left present and it did
not see: REAPED when a reap acted on it since it was last seen, VANISHED
otherwise. An incomplete audit calls nothing gone: what it did not see may be
in what it could not read.

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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import attrgetter

from cloudguard.history.records import (
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


def moment(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


@dataclass(slots=True)
class StoredResource:
    """One row of cloudguard_resources (its columns in RESOURCE_COLUMNS order)."""

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

    @property
    def identity(self) -> Identity:
        return self.provider, self.account, self.match_id


RESOURCE_COLUMNS = tuple(StoredResource.__dataclass_fields__)
# Updated by an observation: everything but the identity, then the id the update is for.
OBSERVED_COLUMNS = tuple(
    c for c in RESOURCE_COLUMNS if c not in {"id", "provider", "account", "match_id"}
)
# The updated columns the store's indexes cover (cloudguard_resources_present, _by_task).
# A row whose values there are as stored is updated without them: SQLite then leaves its
# index entries alone, which halves the update of a nightly audit that sees the same fleet.
INDEXED_COLUMNS = ("task_id", "last_scope", "status")
STEADY_COLUMNS = tuple(c for c in OBSERVED_COLUMNS if c not in INDEXED_COLUMNS)
GONE_COLUMNS = ("status", "gone_at", "gone_how")
resource_row = attrgetter(*RESOURCE_COLUMNS)
observed_row = attrgetter(*OBSERVED_COLUMNS, "id")
steady_row = attrgetter(*STEADY_COLUMNS, "id")
indexed_values = attrgetter(*INDEXED_COLUMNS)
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
)


@dataclass
class AuditWrite:
    """Rows to write for one audit's observations, and what the report is told."""

    new_resources: list[StoredResource] = field(default_factory=list)
    observed: list[StoredResource] = field(default_factory=list)  # known ones, updated
    indexed_before: dict[int, object] = field(default_factory=dict)  # by id, as stored
    observations: list[tuple[object, ...]] = field(default_factory=list)
    findings: dict[ResourceKey, FindingHistory] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys((NEW, BACK), 0))
    leaking: int = 0
    accrued: float = 0.0
    leaked_accrued: float = 0.0

    def updates(self) -> tuple[list[StoredResource], list[StoredResource]]:
        """The known resources to update: (those whose indexed columns are as stored, the
        others)."""
        steady: list[StoredResource] = []
        moved: list[StoredResource] = []
        for resource in self.observed:
            same = indexed_values(resource) == self.indexed_before[resource.id]
            (steady if same else moved).append(resource)
        return steady, moved

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


def plan_observations(
    run: AuditRun,
    run_id: int,
    observations: Iterable[Observation],
    known: Mapping[Identity, StoredResource],
    next_id: int,
) -> AuditWrite:
    """`known`: the latest incarnation the history has of each identity observed."""
    at = epoch(run.at)
    write = AuditWrite()
    latest = dict(known)
    seen: set[int] = set()
    for observation in observations:
        if observation.key in write.findings:
            continue  # the same resource twice in one audit counts once
        identity = (observation.key.provider, observation.key.account, observation.key.id)
        stored = latest.get(identity)
        if stored is None or not same_resource(stored.uid, observation.key.uid):
            stored = _new_resource(next_id, observation, run, run_id, at)
            next_id += 1
            write.new_resources.append(stored)
            change, previous_verdict, hours, cost, interval_leaking = NEW, None, 0.0, 0.0, False
        else:
            previous_verdict = stored.verdict
            if stored.id not in seen:
                write.observed.append(stored)
                write.indexed_before[stored.id] = indexed_values(stored)
            change, hours, cost, interval_leaking = _observe(stored, observation, run, run_id, at)
        latest[identity] = stored
        seen.add(stored.id)
        leaking = observation.verdict in LEAKING_VERDICTS
        stored.leaking_observations += leaking
        write.observations.append(
            (run_id, stored.id, observation.verdict, " ".join(observation.reasons), change,
             _flag(observation.billable), observation.hourly, hours, cost, int(interval_leaking))
        )  # fmt: skip
        write.findings[observation.key] = FindingHistory(
            change=change,
            first_seen=moment(stored.first_seen),
            previous_verdict=previous_verdict,
            observed_hours=stored.observed_hours,
            accrued=stored.accrued,
            returns=stored.returns,
        )
        if change != STILL:
            write.counts[change] += 1
        write.leaking += leaking
        write.accrued += cost
        if interval_leaking:
            write.leaked_accrued += cost
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
    )


def _observe(
    stored: StoredResource, observation: Observation, run: AuditRun, run_id: int, at: float
) -> tuple[str, float, float, bool]:
    """Move `stored` to this observation; (change, hours, cost, interval leaking)."""
    stored.first_seen = min(stored.first_seen, at)
    if at < stored.last_seen or (stored.gone_at is not None and at < stored.gone_at):
        return STILL, 0.0, 0.0, False  # a later audit already moved it past this moment
    hours = cost = 0.0
    interval_leaking = False
    if stored.status == GONE:
        change = BACK
        stored.returns += 1
    else:
        change = STILL
        if stored.billable:
            hours = (at - stored.last_seen) / 3600
            cost = hours * stored.hourly if stored.hourly is not None else 0.0
            interval_leaking = stored.verdict in LEAKING_VERDICTS
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
    stored.verdict = observation.verdict
    stored.billable, stored.hourly = _flag(observation.billable), observation.hourly
    return change, hours, cost, interval_leaking


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

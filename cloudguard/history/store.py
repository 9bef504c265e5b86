"""The history store: record audits and reaps, keep acknowledgements, answer questions.

One class over any `Database` backend (SQLite, PostgreSQL): the SQL is the
same, the backend runs it. Every write is one transaction under the store's
write lock: a run is recorded whole or not at all (a killed audit leaves the
store as it was), and two audits at once are recorded one after the other,
neither lost. Every driver error becomes a `HistoryError` naming the store.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import date, datetime
from typing import Any

from cloudguard.acknowledgements import Ack
from cloudguard.history.database import Database, Row
from cloudguard.history.recording import (
    GONE_COLUMNS,
    KEPT_COLUMNS,
    OBSERVATION_COLUMNS,
    OBSERVED_COLUMNS,
    PRESENT,
    PRESENT_COLUMNS,
    RESOURCE_COLUMNS,
    SIGHTING_COLUMNS,
    Identity,
    PresentResource,
    StoredResource,
    billed_interval,
    epoch,
    gone_row,
    moment,
    moved_row,
    observed_row,
    plan_gone,
    plan_observations,
    plan_steady,
    resource_row,
    sightings_row,
)
from cloudguard.history.schema import migrate
from cloudguard.history.store_records import (
    BACK,
    NEW,
    STILL,
    AuditRun,
    DayTrend,
    MonthCost,
    Observation,
    Offender,
    ReapAction,
    ReapRun,
    RecordedAudit,
    ResourceTimeline,
    RunSummary,
    TimelineEntry,
)

AUDIT = "audit"
REAP = "reap"
NOT_AUDITED = "not audited"  # a timeline's status: only reaps acted on it, no audit saw it
STORE_ACK_SOURCE = "cloudguard ack"

_RUN_COLUMNS = (
    "id", "kind", "scope", "at", "host", "exit_code", "complete", "findings", "new", "back",
    "gone", "leaking", "accrued", "leaked_accrued", "currency", "plan_digest", "acknowledged",
    "implied",
)  # fmt: skip
_REAP_COLUMNS = (
    "id", "run_id", "provider", "account", "match_id", "uid", "display_id", "name", "kind",
    "action", "event", "detail", "at",
)  # fmt: skip


# A resource is its row of cloudguard_resources (r) and of cloudguard_sightings (s).
def _columns(names: Iterable[str]) -> str:
    return ", ".join(f"{'s' if name in SIGHTING_COLUMNS else 'r'}.{name}" for name in names)


_RESOURCES = _columns(RESOURCE_COLUMNS)
_PRESENT = _columns(PRESENT_COLUMNS)
_BOTH = "cloudguard_resources r JOIN cloudguard_sightings s ON s.id = r.id"
_IDENTITY = ("provider TEXT", "account TEXT", "match_id TEXT")


class HistoryStore:
    def __init__(self, database: Database) -> None:
        self._db = database
        try:
            migrate(database)
            database.tune_storage()
        except BaseException:
            database.close()
            raise

    @property
    def location(self) -> str:
        return self._db.location

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> HistoryStore:
        return self

    # Locks every host of a shared store sees (`reap apply`, cloudguard.reap.locks)

    @property
    def locks_across_hosts(self) -> bool:
        return self._db.locks_across_hosts

    def try_lock(self, name: str) -> bool:
        """Take the store's session lock on `name` (a plan's or a resource's lock file name)
        without waiting; False: another session, on any host, holds it."""
        with self._db.guarded():
            return self._db.try_lock(_lock_key(name))

    def unlock(self, name: str) -> None:
        with self._db.guarded():
            self._db.unlock(_lock_key(name))

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Recording

    def record_audit(
        self, run: AuditRun, observations: Iterable[Observation], *, acknowledged: int = 0
    ) -> RecordedAudit:
        """Record one audit's observations; what changed for each, and what is gone."""
        observations = list(observations)
        at = epoch(run.at)
        db = self._db
        with db.guarded(), db.write():
            run_id = self._next_id("cloudguard_runs")
            previous_at = db.value(
                "SELECT max(at) FROM cloudguard_runs WHERE kind = ? AND scope = ? AND at < ?",
                (AUDIT, run.scope, at),
            )
            # Recorded after every audit before it: what it saw as it was needs no row.
            latest_audit = db.value("SELECT max(at) FROM cloudguard_runs WHERE kind = ?", (AUDIT,))
            implied = latest_audit is None or at > latest_audit
            present = self._present(run.scope, at, run_id)
            write, moved = plan_steady(run, run_id, observations, present if implied else ())
            known = self._known({(o.key.provider, o.key.account, o.key.id) for o in moved})
            next_resource = self._next_id("cloudguard_resources")
            plan_observations(write, run, run_id, moved, known, next_resource)
            db.insert_many("cloudguard_resources", KEPT_COLUMNS,
                           map(resource_row, write.new_resources))  # fmt: skip
            db.insert_many("cloudguard_sightings", ("id", *SIGHTING_COLUMNS),
                           map(sightings_row, write.new_resources))  # fmt: skip
            db.update_many(
                "cloudguard_resources", OBSERVED_COLUMNS, map(observed_row, write.observed)
            )
            # What the rewritten and the steady resources' nights moved on: narrow rows.
            db.update_many(
                "cloudguard_sightings",
                SIGHTING_COLUMNS,
                [*map(moved_row, write.observed), *write.moved_on],
            )
            seen = {*write.steady, *(resource.id for resource in write.observed)}
            not_seen = [
                tuple.__new__(PresentResource, row) for row in present if row[0] not in seen
            ]  # each by its id (a row's first column), then by name
            gone = plan_gone(run, self._resources(not_seen), self._reaped_at(not_seen))
            db.update_many("cloudguard_resources", GONE_COLUMNS, map(gone_row, gone))
            write.closed += [(resource.last_seen, resource.id) for resource in gone]
            db.execute_many(
                "UPDATE cloudguard_observations SET seen_until = ? "
                "WHERE resource_id = ? AND seen_until IS NULL",
                write.closed,
            )
            if implied and not run.complete:  # what it could not read, it did not see there
                db.insert_many("cloudguard_unseen", ("resource_id", "run_id"),
                               ((resource.id, run_id) for resource in not_seen))  # fmt: skip
            db.insert_many("cloudguard_observations", OBSERVATION_COLUMNS, write.observations)
            db.insert_many(
                "cloudguard_runs",
                _RUN_COLUMNS,
                [
                    (run_id, AUDIT, run.scope, at, run.host, run.exit_code, int(run.complete),
                     len(write.findings), write.counts[NEW], write.counts[BACK], len(gone),
                     write.leaking, write.accrued, write.leaked_accrued, run.currency, "",
                     acknowledged, int(implied))
                ],
            )  # fmt: skip
        return write.recorded(run_id, run, previous_at, gone)

    def record_reap(self, run: ReapRun, actions: Iterable[ReapAction]) -> int:
        """Record one reap apply and what it did to each item; the run's id."""
        actions = list(actions)
        db = self._db
        with db.guarded(), db.write():
            run_id = self._next_id("cloudguard_runs")
            first_action = self._next_id("cloudguard_reap_actions")
            db.insert_many(
                "cloudguard_runs",
                _RUN_COLUMNS,
                [
                    (run_id, REAP, "", epoch(run.at), run.host, run.exit_code, 1, len(actions),
                     0, 0, 0, 0, 0.0, 0.0, "", run.plan_digest, 0, 0)
                ],
            )  # fmt: skip
            db.insert_many(
                "cloudguard_reap_actions",
                _REAP_COLUMNS,
                (
                    (first_action + n, run_id, a.key.provider, a.key.account, a.key.id,
                     a.key.uid, a.display_id, a.name, a.kind, a.action, a.event, a.detail,
                     epoch(a.at))
                    for n, a in enumerate(actions)
                ),
            )  # fmt: skip
        return run_id

    def _next_id(self, table: str) -> int:
        # Under the write lock: no other writer can take the same id.
        return int(self._db.value(f"SELECT coalesce(max(id), 0) + 1 FROM {table}"))

    def _present(self, scope: str, at: float, run_id: int) -> list[tuple[Any, ...]]:
        """What this scope's audits left present, and no later audit saw (none has this run's
        id yet): what this run may see as it was, and calls gone when it does not see it."""
        rows = self._db.rows(
            f"SELECT {_PRESENT} FROM {_BOTH} "
            "WHERE r.last_scope = ? AND r.status = ? AND s.last_run <> ? AND s.last_seen < ?",
            (scope, PRESENT, run_id, at),
        )
        # Rows in PRESENT_COLUMNS order, as read: made a PresentResource only when not seen
        # (a copy of each of 90,000 rows a steady night cost 0.04-0.06 s).
        return rows

    def _known(self, identities: set[Identity]) -> dict[Identity, StoredResource]:
        """The latest incarnation of each identity the history has seen."""
        # A store that holds no resource yet (its first audit) knows none: not worth a
        # scratch table of every identity observed and a join (0.13 s for 90,000).
        if not identities or self._db.value("SELECT 1 FROM cloudguard_resources LIMIT 1") is None:
            return {}
        with self._scratch("cloudguard_observed", _IDENTITY, identities):
            rows = self._db.rows(
                f"SELECT {_RESOURCES} FROM {_BOTH} JOIN cloudguard_observed o "
                "ON r.provider = o.provider AND r.account = o.account AND r.match_id = o.match_id"
            )
        latest: dict[Identity, StoredResource] = {}
        for row in rows:
            resource = StoredResource(*row)
            current = latest.get(resource.identity)
            if current is None or resource.id > current.id:
                latest[resource.identity] = resource
        return latest

    def _resources(self, wanted: list[PresentResource]) -> Iterator[StoredResource]:
        """Each of `wanted` whole, read when first asked for (never, for an incomplete audit:
        it calls nothing gone)."""
        if not wanted:
            return
        with self._scratch("cloudguard_wanted", self._ids, ((r.id,) for r in wanted)):
            rows = self._db.rows(
                f"SELECT {_RESOURCES} FROM {_BOTH} "
                "WHERE r.id IN (SELECT id FROM cloudguard_wanted) ORDER BY r.id"
            )
        yield from (StoredResource(*row) for row in rows)

    @property
    def _ids(self) -> tuple[str]:
        return (f"id {self._db.types.id} PRIMARY KEY",)

    @contextmanager
    def _scratch(self, table: str, columns: tuple[str, ...], rows: Iterable[Row]) -> Iterator[None]:
        """A temporary `table` of `columns` ("name TYPE ...") holding `rows`: one side of a join
        the store makes with what it was given. Inside the write's transaction; dropped after."""
        db = self._db
        db.execute(f"CREATE TEMP TABLE {table} ({', '.join(columns)})")
        db.insert_many(table, [column.split()[0] for column in columns], rows)
        yield
        db.execute(f"DROP TABLE {table}")

    def _reaped_at(self, resources: Sequence[PresentResource]) -> dict[Identity, list[float]]:
        if not resources:
            return {}
        since = min(resource.last_seen for resource in resources)
        reaped: dict[Identity, list[float]] = defaultdict(list)
        for provider, account, match_id, at in self._db.rows(
            "SELECT provider, account, match_id, at FROM cloudguard_reap_actions "
            "WHERE event = 'done' AND at >= ?",
            (since,),
        ):
            reaped[(provider, account, match_id)].append(at)
        return reaped

    # Acknowledgements made with `cloudguard ack`

    def add_ack(self, ack: Ack, now: datetime) -> None:
        db = self._db
        with db.guarded(), db.write():
            db.insert_many(
                "cloudguard_acknowledgements",
                ("id", "match_id", "display_id", "owner", "reason", "until", "created_at"),
                [
                    (self._next_id("cloudguard_acknowledgements"), ack.id.casefold(), ack.id,
                     ack.owner, ack.reason, ack.until.isoformat(), epoch(now))
                ],
            )  # fmt: skip

    def revoke_ack(self, resource_id: str, by: str, now: datetime) -> int:
        """End every acknowledgement of `resource_id` (its case ignored); how many ended."""
        db = self._db
        with db.guarded(), db.write():
            where = "WHERE match_id = ? AND revoked_at IS NULL"
            count = int(
                db.value(
                    f"SELECT count(*) FROM cloudguard_acknowledgements {where}",
                    (resource_id.casefold(),),
                )
            )
            db.execute(
                f"UPDATE cloudguard_acknowledgements SET revoked_at = ?, revoked_by = ? {where}",
                (epoch(now), by, resource_id.casefold()),
            )
        return count

    def acks(self) -> list[Ack]:
        """Every acknowledgement not revoked, expired ones included (they make findings loud)."""
        db = self._db
        with db.guarded(), db.read():
            rows = db.rows(
                "SELECT display_id, owner, reason, until FROM cloudguard_acknowledgements "
                "WHERE revoked_at IS NULL ORDER BY id"
            )
        return [
            Ack(rid, owner, reason, date.fromisoformat(until), STORE_ACK_SOURCE)
            for rid, owner, reason, until in rows
        ]

    # Questions

    def runs(self, limit: int = 30) -> list[RunSummary]:
        db = self._db
        with db.guarded(), db.read():
            rows = db.rows(
                "SELECT id, kind, scope, at, host, exit_code, complete, findings, new, back, "
                "gone, leaking, accrued, leaked_accrued, currency, acknowledged "
                "FROM cloudguard_runs ORDER BY at DESC, id DESC LIMIT ?",
                (limit,),
            )
        return [_run_summary(*row) for row in rows]

    def ids_like(self, text: str, limit: int = 20) -> list[str]:
        """The ids (as reported) of resources named `text` or whose id ends in `/text`, case
        ignored: what `history resource NAME` may mean. At most `limit`."""
        folded = text.casefold()
        suffix = "%/" + folded.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        db = self._db
        with db.guarded(), db.read():
            rows = db.rows(
                "SELECT DISTINCT display_id FROM cloudguard_resources "
                "WHERE lower(name) = ? OR lower(match_id) LIKE ? ESCAPE '\\' "
                "ORDER BY display_id LIMIT ?",
                (folded, suffix, limit),
            )
        return [str(display_id) for (display_id,) in rows]

    def timeline(self, resource_id: str) -> list[ResourceTimeline]:
        """Every resource known by this id, as typed or case-folded (the key of a cloud whose ids
        ignore case), each incarnation apart, with its observations and reap actions in order."""
        db = self._db
        candidates = (resource_id, resource_id.casefold())
        with db.guarded(), db.read():
            resources = [
                StoredResource(*row)
                for row in db.rows(
                    f"SELECT {_RESOURCES} FROM {_BOTH} WHERE r.match_id IN (?, ?) ORDER BY r.id",
                    candidates,
                )
            ]
            audited = {resource.identity for resource in resources}
            reaped_only = [
                identity
                for identity in dict.fromkeys(
                    db.rows(
                        "SELECT provider, account, match_id FROM cloudguard_reap_actions "
                        "WHERE match_id IN (?, ?) ORDER BY id",
                        candidates,
                    )
                )
                if identity not in audited
            ]
            return [self._timeline(resource) for resource in resources] + [
                self._reaped_only(*identity) for identity in reaped_only
            ]

    def _reaped_only(self, provider: str, account: str, match_id: str) -> ResourceTimeline:
        """A resource a reap acted on that no audit recorded here (planned from a report of
        an audit run without this store)."""
        rows = self._db.rows(
            "SELECT run_id, at, action, event, detail, display_id, uid, name, kind "
            "FROM cloudguard_reap_actions WHERE provider = ? AND account = ? AND match_id = ? "
            "ORDER BY at, id",
            (provider, account, match_id),
        )
        entries = tuple(
            TimelineEntry(at=moment(at), run_id=run_id, kind=REAP, what=action, change=event,
                          detail=detail)
            for run_id, at, action, event, detail, *_ in rows
        )  # fmt: skip
        display_id, uid, name, kind = rows[-1][5:]
        return ResourceTimeline(
            display_id=display_id, provider=provider, account=account, uid=uid, name=name,
            kind=kind, task_id=None, first_seen=entries[0].at, last_seen=entries[-1].at,
            status=NOT_AUDITED, gone_how=None, returns=0, observed_hours=0.0, accrued=0.0,
            entries=entries,
        )  # fmt: skip

    def _timeline(self, resource: StoredResource) -> ResourceTimeline:
        db = self._db
        entries: list[TimelineEntry] = []
        for stored, at, scope, until in self._stored_observations(resource.id):
            entries.append(stored)
            if until is None:  # it holds until the resource was last seen
                until = resource.last_seen
            entries += self._as_it_was(resource.id, stored, at, scope, until)
        entries += [
            TimelineEntry(
                at=moment(at), run_id=run_id, kind=REAP, what=action, change=event, detail=detail
            )
            for run_id, at, action, event, detail in db.rows(
                "SELECT run_id, at, action, event, detail FROM cloudguard_reap_actions "
                "WHERE provider = ? AND account = ? AND match_id = ? AND at >= ?",
                (resource.provider, resource.account, resource.match_id, resource.first_seen),
            )
        ]
        return ResourceTimeline(
            display_id=resource.display_id,
            provider=resource.provider,
            account=resource.account,
            uid=resource.uid,
            name=resource.name,
            kind=resource.kind,
            task_id=resource.task_id,
            first_seen=moment(resource.first_seen),
            last_seen=moment(resource.last_seen),
            status=resource.status,
            gone_how=resource.gone_how,
            returns=resource.returns,
            observed_hours=resource.observed_hours,
            accrued=resource.accrued,
            entries=tuple(sorted(entries, key=lambda e: (e.at, e.kind != AUDIT))),
        )

    def _stored_observations(
        self, resource_id: int
    ) -> list[tuple[TimelineEntry, float, str, float | None]]:
        """Each observation stored for the resource: (its entry, when, the audit's scope, until
        when it holds; None: until the resource was last seen)."""
        found = []
        for row in self._db.rows(
            "SELECT o.run_id, r.at, o.verdict, o.change, o.billable, o.hourly, o.hours, "
            "o.accrued, o.reasons, r.scope, o.seen_until FROM cloudguard_observations o "
            "JOIN cloudguard_runs r ON r.id = o.run_id WHERE o.resource_id = ?",
            (resource_id,),
        ):
            run_id, at, verdict, change, billable, hourly, hours, accrued, reasons = row[:9]
            entry = TimelineEntry(
                at=moment(at),
                run_id=run_id,
                kind=AUDIT,
                what=verdict,
                change=change,
                billable=None if billable is None else bool(billable),
                hourly=hourly,
                hours=hours,
                accrued=accrued,
                detail=reasons,
            )
            found.append((entry, at, *row[9:]))
        return found

    def _as_it_was(
        self, resource_id: int, entry: TimelineEntry, at: float, scope: str, until: float
    ) -> list[TimelineEntry]:
        """The audits after `entry` (an observation stored at `at`) up to `until` that saw the
        resource as it says, none of which stored a row: those of its scope recorded after it
        and in order (`implied`) that could read the resource (not `unseen`). Each is charged
        the interval since the one before, as `entry` says (billable, at its price)."""
        found = self._db.rows(
            "SELECT id, at FROM cloudguard_runs WHERE kind = ? AND scope = ? AND implied = 1 "
            "AND id > ? AND at > ? AND at <= ? AND id NOT IN "
            "(SELECT run_id FROM cloudguard_unseen WHERE resource_id = ?) ORDER BY at, id",
            (AUDIT, scope, entry.run_id, at, until, resource_id),
        )
        entries = []
        for run_id, seen_at in found:
            hours, cost = billed_interval(entry.billable, entry.hourly, at, seen_at)
            entries.append(replace(entry, at=moment(seen_at), run_id=run_id, change=STILL,
                                   hours=hours, accrued=cost))  # fmt: skip
            at = seen_at
        return entries

    def cost_by_month(self) -> list[MonthCost]:
        """What the audits observed accruing, per calendar month (UTC) and currency."""
        db = self._db
        with db.guarded(), db.read():
            rows = db.rows(
                "SELECT at, currency, accrued, leaked_accrued FROM cloudguard_runs "
                "WHERE kind = ? ORDER BY at",
                (AUDIT,),
            )
        months: dict[tuple[str, str], list[float]] = {}
        for at, currency, accrued, leaked in rows:
            total = months.setdefault((moment(at).strftime("%Y-%m"), currency), [0.0, 0.0, 0])
            total[0] += leaked
            total[1] += accrued
            total[2] += 1
        return [
            MonthCost(month, currency, round(leaked, 2), round(accrued, 2), int(audits))
            for (month, currency), (leaked, accrued, audits) in months.items()
        ]

    def trend(self, since: datetime) -> list[DayTrend]:
        """Per day since `since`: leaking findings at each scope's last audit of the day
        (summed over scopes), and the leaked cost the day's audits observed accruing."""
        db = self._db
        with db.guarded(), db.read():
            rows = db.rows(
                "SELECT scope, at, leaking, leaked_accrued FROM cloudguard_runs "
                "WHERE kind = ? AND at >= ? ORDER BY at, id",
                (AUDIT, epoch(since)),
            )
        last_of_day: dict[str, dict[str, int]] = {}
        accrued: dict[str, float] = defaultdict(float)
        for scope, at, leaking, leaked in rows:
            day = moment(at).strftime("%Y-%m-%d")
            last_of_day.setdefault(day, {})[scope] = leaking
            accrued[day] += leaked
        return [
            DayTrend(day, sum(scopes.values()), round(accrued[day], 2))
            for day, scopes in last_of_day.items()
        ]

    def offenders(self, limit: int = 10) -> list[Offender]:
        """Task ids whose resources were found leaking, those with the most resources first."""
        db = self._db
        with db.guarded(), db.read():
            rows = db.rows(
                "SELECT r.task_id, count(*), sum(s.leaking_observations), "
                f"sum(s.leaked_accrued), min(r.first_seen), max(s.last_seen) FROM {_BOTH} "
                "WHERE s.leaking_observations > 0 AND r.task_id IS NOT NULL GROUP BY r.task_id "
                "ORDER BY count(*) DESC, sum(s.leaked_accrued) DESC, r.task_id LIMIT ?",
                (limit,),
            )
        return [
            Offender(
                task, int(count), int(seen), round(float(cost), 2), moment(first), moment(last)
            )
            for task, count, seen, cost, first, last in rows
        ]


def _run_summary(
    run_id: int, kind: str, scope: str, at: float, host: str, exit_code: int, complete: int,
    findings: int, new: int, back: int, gone: int, leaking: int, accrued: float,
    leaked_accrued: float, currency: str, acknowledged: int,
) -> RunSummary:  # fmt: skip
    return RunSummary(
        run_id, kind, scope, moment(at), host, exit_code, bool(complete), findings, new, back,
        gone, leaking, accrued, leaked_accrued, currency, acknowledged,
    )  # fmt: skip


def _lock_key(name: str) -> int:
    """A 64-bit advisory lock key for `name`, apart from the store's own write lock's."""
    digest = hashlib.sha256(b"cloudguard reap lock\0" + name.encode()).digest()
    return int.from_bytes(digest[:8], "big") - (1 << 63)

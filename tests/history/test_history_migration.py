"""A store of an older schema migrates and keeps its history; a newer one is refused.

Each released schema is kept as released, with history in it, as SQL for each
backend (fixtures/schema-v1.*.sql, schema-v2.*.sql, schema-v3.*.sql, the latter two made
by the code of their version): migrations are tested from what users have, not from
what the code would make today. Two first uses at once migrate once: a barrier
holds both until each has read the old version, before either takes the lock.
"""

from __future__ import annotations

import sqlite3
import threading
from contextlib import AbstractContextManager
from datetime import date
from pathlib import Path
from typing import Any

import psycopg
import pytest
from history_helpers import audit, changes, day, gone, observed, raw_rows
from named_checks import broken, raises_at

from cloudguard.acknowledgements import Ack
from cloudguard.history.database import Database
from cloudguard.history.errors import HistoryError, HistoryTooNew, HistoryUnavailable
from cloudguard.history.location import open_store
from cloudguard.history.postgresql import PostgresDatabase
from cloudguard.history.schema import CURRENT
from cloudguard.history.sqlite import SqliteDatabase
from cloudguard.history.store import HistoryStore

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _run_sql(backend: str, location: str, script: str) -> None:
    if backend == "sqlite":
        Path(location).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with sqlite3.connect(location) as raw:
            raw.executescript(script)
        return
    with psycopg.connect(location, autocommit=True) as raw:
        raw.execute(script.encode())


def _version(backend: str, location: str) -> int:
    if backend == "sqlite":
        with sqlite3.connect(location) as raw:
            return int(raw.execute("SELECT version FROM cloudguard_schema").fetchone()[0])
    with psycopg.connect(location) as raw:
        found = raw.execute("SELECT version FROM cloudguard_schema").fetchone()
        assert found is not None
        return int(found[0])


def _released_store(version: int, backend: str, location: str) -> None:
    _run_sql(backend, location, (FIXTURES / f"schema-v{version}.{backend}.sql").read_text())
    assert _version(backend, location) == version


def _v1_store(backend: str, location: str) -> None:
    _released_store(1, backend, location)


def test_a_version_1_store_migrates_and_keeps_its_history(backend: str, location: str) -> None:
    _v1_store(backend, location)
    with open_store(location) as store:
        assert _version(backend, location) == CURRENT == 4
        second = audit(store, 1, [observed("vm-a", uid="uid-a")])
        assert changes(second) == {"vm-a": "still"}, "the v1 night's resource is known"
        a = second.findings[observed("vm-a", uid="uid-a").key]
        assert a.first_seen == day(0) and a.accrued == pytest.approx(24 * 0.172)
        assert gone(second) == {"vm-b": "vanished"}, "its v1 reap failed: it was not reaped"
        assert [run.kind for run in store.runs()] == ["audit", "reap", "audit"]
        (b,) = store.timeline(observed("vm-b").display_id)
        assert [(e.kind, e.change) for e in b.entries] == [("audit", "new"), ("reap", "failed")]
        ack = Ack(observed("vm-a").display_id, "ops", "kept", date(2025, 7, 1), "cloudguard ack")
        store.add_ack(ack, day(1))  # version 2's table
        assert store.acks() == [ack]


def test_a_migration_that_fails_leaves_the_store_at_its_version(
    backend: str, location: str
) -> None:
    _v1_store(backend, location)
    # Version 2's last statement adds this column: with it already there, the migration
    # fails after creating its table and indexes, which must not stay behind.
    _run_sql(backend, location, "ALTER TABLE cloudguard_runs ADD COLUMN acknowledged INTEGER;")
    with pytest.raises(HistoryUnavailable, match="acknowledged"):
        open_store(location)
    assert _version(backend, location) == 1
    if backend == "sqlite":
        with sqlite3.connect(location) as raw:
            names = {n for (n,) in raw.execute("SELECT name FROM sqlite_master")}
    else:
        with psycopg.connect(location) as raw:
            names = {
                n
                for (n,) in raw.execute(
                    "SELECT relname FROM pg_class WHERE relname LIKE 'cloudguard%%'"
                )
            }
    assert "cloudguard_acknowledgements" not in names
    assert "cloudguard_observations_by_resource" not in names
    assert "cloudguard_runs" in names, "the control: the listing sees the store's tables"


def test_a_store_of_a_newer_cloudguard_is_refused(backend: str, location: str) -> None:
    open_store(location).close()
    _run_sql(backend, location, "UPDATE cloudguard_schema SET version = 99;")
    with raises_at("a-newer-store-refused", HistoryTooNew, "a v99 store was opened") as raised:
        open_store(location)
    message = str(raised.value)
    assert "schema version 99" in message and "upgrade cloudguard-ci" in message
    assert _version(backend, location) == 99


def test_a_version_2_store_migrates_and_keeps_its_history(backend: str, location: str) -> None:
    """Its last observation of each present resource holds on: the next audit sees vm-a as
    it was, stores no row for it, and its timeline goes on from the released history."""
    _released_store(2, backend, location)
    with open_store(location) as store:
        assert _version(backend, location) == CURRENT == 4
        a = observed("vm-a", uid="uid-a", hourly=0.2)
        third = audit(store, 3, [a])
        assert changes(third) == {"vm-a": "still"} and third.gone == ()
        told = third.findings[a.key]
        assert (told.first_seen, told.previous_verdict) == (day(0), "orphan")
        assert told.accrued == pytest.approx(2 * 24 * 0.172 + 24 * 0.2), "as released, and on"
        fourth = audit(store, 4, [a, observed("vm-b", "ok", uid="uid-b", task_id="task-0042")])
        assert changes(fourth) == {"vm-a": "still", "vm-b": "back"}
        (vm_a,) = raw_rows(location, f"SELECT id FROM cloudguard_resources WHERE name = {a.name!r}")
        stored = raw_rows(
            location, f"SELECT run_id FROM cloudguard_observations WHERE resource_id = {vm_a[0]}"
        )
        assert sorted(run for (run,) in stored) == [1, 3, 5, 6], "none for the nights it held"
        (timeline,) = store.timeline(a.display_id)
        assert [(e.at, e.hours) for e in timeline.entries] == [
            (day(0), 0.0), (day(1), 24.0), (day(1.75), 0.0), (day(2), 24.0), (day(3), 24.0),
            (day(4), 24.0),
        ], "the released observations, the late one among them, then the derived ones"  # fmt: skip
        assert timeline.accrued == pytest.approx(2 * 24 * 0.172 + 2 * 24 * 0.2)
        assert [ack.owner for ack in store.acks()] == ["platform-team"]
        assert {o.task_id for o in store.offenders()} == {"cloud-noenv-c7", "smoke-b2"}


def test_a_migration_to_version_3_that_fails_leaves_the_store_at_version_2(
    backend: str, location: str
) -> None:
    _released_store(2, backend, location)
    # Version 3's second statement adds this column: the first (reasons) must not stay.
    _run_sql(backend, location, "ALTER TABLE cloudguard_runs ADD COLUMN implied INTEGER;")
    with pytest.raises(HistoryUnavailable, match="implied"):
        open_store(location)
    assert _version(backend, location) == 2
    columns = raw_rows(location, "SELECT * FROM cloudguard_resources WHERE id = 1")
    assert len(columns[0]) == 24, "the store's resources as released, no reasons column"


def test_a_version_3_store_migrates_and_keeps_its_history(backend: str, location: str) -> None:
    """Each resource's night columns move to their own table with the same figures: the next
    night sees vm-a and vm-p as they were (no row), vm-b back, and every timeline, cost and
    offender is what the code of version 3 said of the same night (figures taken from it)."""
    _released_store(3, backend, location)
    with open_store(location) as store:
        assert _version(backend, location) == CURRENT == 4
        a = observed("vm-a", uid="uid-a", hourly=0.2)
        p = observed("vm-p", uid="uid-p")
        b = observed("vm-b", "ok", uid="uid-b", task_id="task-0042")
        fifth = audit(store, 5, [a, p, b])
        assert changes(fifth) == {"vm-a": "still", "vm-p": "still", "vm-b": "back"}
        assert fifth.gone == ()
        told = {key.id.rsplit("/", 1)[-1]: found for key, found in fifth.findings.items()}
        assert [told[n].previous_verdict for n in ("vm-a", "vm-p", "vm-b")] == [
            "orphan", "orphan", "ok"
        ]  # fmt: skip
        assert [(told[n].observed_hours, told[n].returns) for n in ("vm-a", "vm-p", "vm-b")] == [
            (120.0, 0), (120.0, 0), (72.0, 1)
        ]  # fmt: skip
        assert [told[n].accrued for n in ("vm-a", "vm-p", "vm-b")] == pytest.approx(
            [21.984, 20.64, 12.384]
        )
        stored = raw_rows(
            location, "SELECT resource_id FROM cloudguard_observations WHERE run_id = 9"
        )
        assert stored == [(2,)], "only vm-b's return is stored: vm-a and vm-p held"
        hours = {
            name: [(e.at, e.change, e.hours) for e in timeline.entries]
            for name in ("vm-a", "vm-b", "vm-p")
            for timeline in store.timeline(observed(name).display_id)
        }
        assert hours["vm-a"] == [
            (day(0), "new", 0.0), (day(1), "still", 24.0), (day(2), "still", 24.0),
            (day(3), "still", 24.0), (day(3.5), "still", 0.0), (day(4), "still", 24.0),
            (day(5), "still", 24.0),
        ]  # fmt: skip
        assert hours["vm-b"] == [
            (day(0), "new", 0.0), (day(1), "still", 24.0), (day(3), "still", 48.0),
            (day(3.5), "still", 0.0), (day(5), "back", 0.0),
        ], "the incomplete audit of day 2 could not read it"  # fmt: skip
        assert [e.what for e in store.timeline(p.display_id)[0].entries] == [
            "pending", "pending", "pending", "orphan", "orphan", "orphan", "orphan"
        ]  # fmt: skip
        (c,) = store.timeline(observed("vm-c").display_id)
        assert (c.status, c.gone_how, [e.change for e in c.entries]) == (
            "gone", "reaped", ["new", "done"]
        )  # fmt: skip
        offenders = [(o.task_id, o.resources, o.leaking_observations) for o in store.offenders()]
        assert offenders == [("cloud-noenv-c7", 3, 12), ("smoke-b2", 1, 1)]
        assert [o.leaked_accrued for o in store.offenders()] == [30.24, 0.0]
        assert [run.id for run in store.runs()] == [9, 7, 8, 6, 5, 4, 3, 2, 1]
        assert [ack.owner for ack in store.acks()] == ["platform-team"]
    counts = raw_rows(
        location,
        "SELECT (SELECT count(*) FROM cloudguard_resources), "
        "(SELECT count(*) FROM cloudguard_sightings)",
    )
    assert counts == [(5, 5)], "every resource has its night columns"


def test_a_migration_to_version_4_that_fails_leaves_the_store_at_version_3(
    backend: str, location: str
) -> None:
    _released_store(3, backend, location)
    # Version 4's third statement makes this table: the first two (the narrow table, filled)
    # must not stay, and the resources keep their columns.
    _run_sql(backend, location, "CREATE TABLE cloudguard_resources_v4 (id INTEGER);")
    with pytest.raises(HistoryUnavailable, match="cloudguard_resources_v4"):
        open_store(location)
    assert _version(backend, location) == 3
    columns = raw_rows(location, "SELECT * FROM cloudguard_resources WHERE id = 1")
    assert len(columns[0]) == 25, "the store's resources as released"
    with pytest.raises(Exception, match="cloudguard_sightings"):
        raw_rows(location, "SELECT count(*) FROM cloudguard_sightings")


def _waiting_at(barrier: threading.Barrier, kind: Any) -> Any:
    """`kind`, whose first write waits until another store's has come as far (each has read
    the old version by then): the race of two first uses, forced rather than hoped for."""

    class AtTheBarrier(kind):
        waited = False

        def write(self) -> AbstractContextManager[None]:
            if not self.waited:
                self.waited = True
                barrier.wait(timeout=60)
            return super().write()

    return AtTheBarrier


@pytest.mark.parametrize("released", [0, 2, 3], ids=["new", "version-2", "version-3"])
def test_two_first_uses_at_once_migrate_the_store_once(
    backend: str, location: str, released: int
) -> None:
    if released:
        _released_store(released, backend, location)
    kind = _waiting_at(threading.Barrier(2), _DATABASES[backend])
    where = location if backend == "postgresql" else Path(location)
    errors: list[BaseException] = []

    def first_use() -> None:
        try:
            HistoryStore(kind(where, busy_timeout=60)).close()
        except BaseException as error:
            errors.append(error)

    users = [threading.Thread(target=first_use) for _ in range(2)]
    for user in users:
        user.start()
    for user in users:
        user.join(timeout=120)
    assert not any(user.is_alive() for user in users), "a first use never finished"
    assert all(isinstance(error, HistoryError) for error in errors), f"the race broke: {errors}"
    assert not errors, broken(
        "migrated-once",
        f"the second first use migrated a store the first had migrated: {errors[0]}",
    )
    assert _version(backend, location) == CURRENT
    with open_store(location) as store:
        recorded = audit(store, 5, [observed("vm-a", uid="uid-a")])
        assert changes(recorded) == {"vm-a": "still" if released else "new"}


_DATABASES: dict[str, type[Database]] = {"sqlite": SqliteDatabase, "postgresql": PostgresDatabase}

"""A store of an older schema migrates and keeps its history; a newer one is refused.

The version 1 schema is kept as released, with a night of history in it, as
SQL for each backend (fixtures/schema-v1.*.sql): migrations are tested from
what users have, not from what the code would make today.
"""

from __future__ import annotations

import sqlite3
from datetime import date
from pathlib import Path

import psycopg
import pytest
from history_helpers import audit, changes, day, gone, observed
from named_checks import raises_at

from cloudguard.acknowledgements import Ack
from cloudguard.history.errors import HistoryTooNew, HistoryUnavailable
from cloudguard.history.location import open_store
from cloudguard.history.schema import CURRENT

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


def _v1_store(backend: str, location: str) -> None:
    _run_sql(backend, location, (FIXTURES / f"schema-v1.{backend}.sql").read_text())
    assert _version(backend, location) == 1


def test_a_version_1_store_migrates_and_keeps_its_history(backend: str, location: str) -> None:
    _v1_store(backend, location)
    with open_store(location) as store:
        assert _version(backend, location) == CURRENT == 3
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

"""Small builders for the history tests: observations and audit runs by day."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from contextlib import closing
from datetime import UTC, datetime, timedelta
from typing import Any

from cloudguard.history.postgresql import is_postgresql_url
from cloudguard.history.store import HistoryStore
from cloudguard.history.store_records import AuditRun, Observation, RecordedAudit, ResourceKey

DAY0 = datetime(2025, 5, 30, 2, 0, tzinfo=UTC)
ACCOUNT = "0000-sub"


def vm_id(name: str, account: str = ACCOUNT) -> str:
    group = f"/subscriptions/{account}/resourceGroups/pilot"
    return f"{group}/providers/Microsoft.Compute/virtualMachines/{name}"


def observed(
    name: str,
    verdict: str = "orphan",
    *,
    hourly: float | None = 0.172,
    billable: bool | None = True,
    uid: str = "",
    task_id: str | None = "cloud-noenv-c7",
    provider: str = "azure",
    account: str = ACCOUNT,
    reasons: tuple[str, ...] | None = None,
) -> Observation:
    """A VM seen with `verdict`; its reasons, unless given, those an orphan or an ok VM has
    (a test of a verdict that changes while its reasons stay names them itself)."""
    display = vm_id(name, account)
    if reasons is None:
        reasons = ("no-controller-record",) if verdict == "orphan" else ()
    return Observation(
        key=ResourceKey(provider, account, display.casefold(), uid),
        display_id=display,
        name=name,
        kind="vm",
        task_id=task_id,
        verdict=verdict,
        reasons=reasons,
        billable=billable,
        hourly=hourly,
    )


def day(n: float) -> datetime:
    return DAY0 + timedelta(days=n)


def audit(
    store: HistoryStore,
    n: float,
    observations: Iterable[Observation],
    *,
    scope: str = "nightly",
    complete: bool = True,
    acknowledged: int = 0,
) -> RecordedAudit:
    run = AuditRun(day(n), scope, complete, 0 if complete else 75, "USD", "ci-runner")
    return store.record_audit(run, observations, acknowledged=acknowledged)


def changes(recorded: RecordedAudit) -> dict[str, str]:
    """name -> change, read back through the keys the observations were given with."""
    return {key.id.rsplit("/", 1)[-1]: history.change for key, history in recorded.findings.items()}


def gone(recorded: RecordedAudit) -> dict[str, str]:
    return {resource.name: resource.how for resource in recorded.gone}


def raw_rows(location: str, sql: str) -> list[tuple[Any, ...]]:
    """Rows read straight from the store's database, past the store: what it wrote."""
    if is_postgresql_url(location):
        import psycopg

        with psycopg.connect(location) as raw:
            return raw.execute(sql.encode()).fetchall()
    with closing(sqlite3.connect(location)) as raw:
        return raw.execute(sql).fetchall()

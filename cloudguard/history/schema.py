"""The store's tables, versioned: each version is a migration from the one before.

`cloudguard_schema` holds the version. Opening a store brings it to
`CURRENT` under the write lock (so two first uses create it once), each
migration in the same transaction as the new version number: a store is at
one version or the next, never between. A store written by a newer
cloudguard is refused, not downgraded; a SQLite file with tables but none of
ours is not a history, and is refused rather than written into. Tables are
prefixed `cloudguard_`: a PostgreSQL store may share its database.

Released versions are never edited: a change is a new migration, and
tests/history keeps each released schema as a frozen fixture to migrate from.

Times are epoch seconds (UTC), costs in the run's currency; ids are assigned
by the store under its write lock.
"""

from __future__ import annotations

from cloudguard.history.database import Database, Types
from cloudguard.history.errors import HistoryCorrupt, HistoryTooNew

VERSION_TABLE = "cloudguard_schema"

_V1 = (
    "CREATE TABLE cloudguard_schema (version INTEGER NOT NULL)",
    """CREATE TABLE cloudguard_runs (
        id {id} PRIMARY KEY,
        kind TEXT NOT NULL,
        scope TEXT NOT NULL,
        at {float} NOT NULL,
        host TEXT NOT NULL,
        exit_code INTEGER NOT NULL,
        complete INTEGER NOT NULL,
        findings INTEGER NOT NULL,
        new INTEGER NOT NULL,
        back INTEGER NOT NULL,
        gone INTEGER NOT NULL,
        leaking INTEGER NOT NULL,
        accrued {float} NOT NULL,
        leaked_accrued {float} NOT NULL,
        currency TEXT NOT NULL,
        plan_digest TEXT NOT NULL
    )""",
    "CREATE INDEX cloudguard_runs_by_scope ON cloudguard_runs (kind, scope, at)",
    """CREATE TABLE cloudguard_resources (
        id {id} PRIMARY KEY,
        provider TEXT NOT NULL,
        account TEXT NOT NULL,
        match_id TEXT NOT NULL,
        uid TEXT NOT NULL,
        display_id TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        task_id TEXT,
        first_seen {float} NOT NULL,
        last_seen {float} NOT NULL,
        last_run {id} NOT NULL,
        last_scope TEXT NOT NULL,
        status TEXT NOT NULL,
        gone_at {float},
        gone_how TEXT,
        returns INTEGER NOT NULL,
        verdict TEXT NOT NULL,
        billable INTEGER,
        hourly {float},
        observed_hours {float} NOT NULL,
        accrued {float} NOT NULL,
        leaked_accrued {float} NOT NULL,
        leaking_observations INTEGER NOT NULL
    )""",
    "CREATE INDEX cloudguard_resources_by_identity "
    "ON cloudguard_resources (provider, account, match_id)",
    "CREATE INDEX cloudguard_resources_present ON cloudguard_resources (last_scope, status)",
    "CREATE INDEX cloudguard_resources_by_task ON cloudguard_resources (task_id)",
    """CREATE TABLE cloudguard_observations (
        run_id {id} NOT NULL,
        resource_id {id} NOT NULL,
        verdict TEXT NOT NULL,
        reasons TEXT NOT NULL,
        change TEXT NOT NULL,
        billable INTEGER,
        hourly {float},
        hours {float} NOT NULL,
        accrued {float} NOT NULL,
        interval_leaking INTEGER NOT NULL,
        PRIMARY KEY (run_id, resource_id)
    )""",
    """CREATE TABLE cloudguard_reap_actions (
        id {id} PRIMARY KEY,
        run_id {id} NOT NULL,
        provider TEXT NOT NULL,
        account TEXT NOT NULL,
        match_id TEXT NOT NULL,
        uid TEXT NOT NULL,
        display_id TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        action TEXT NOT NULL,
        event TEXT NOT NULL,
        detail TEXT NOT NULL,
        at {float} NOT NULL
    )""",
    "CREATE INDEX cloudguard_reap_actions_by_identity "
    "ON cloudguard_reap_actions (provider, account, match_id)",
)

# Version 2: acknowledgements made with `cloudguard ack`; a resource's timeline read by
# resource (a year of nightly runs made it a scan of every observation); how many
# findings of a run were acknowledged.
_V2 = (
    """CREATE TABLE cloudguard_acknowledgements (
        id {id} PRIMARY KEY,
        match_id TEXT NOT NULL,
        display_id TEXT NOT NULL,
        owner TEXT NOT NULL,
        reason TEXT NOT NULL,
        until TEXT NOT NULL,
        created_at {float} NOT NULL,
        revoked_at {float},
        revoked_by TEXT
    )""",
    "CREATE INDEX cloudguard_acknowledgements_by_id ON cloudguard_acknowledgements (match_id)",
    "CREATE INDEX cloudguard_observations_by_resource ON cloudguard_observations (resource_id)",
    "ALTER TABLE cloudguard_runs ADD COLUMN acknowledged INTEGER NOT NULL DEFAULT 0",
)

# Version 3: an audit that sees a resource as the previous audit of its scope left it writes
# no row for it: one statement moves every such resource on (last seen, hours and cost
# observed), and an observation is stored only when something changed (new, back, another
# verdict, reasons, price, name, task or scope) or when the audit was recorded out of order.
# Each stored observation holds until `seen_until` (NULL: until the resource's last_seen);
# the audits in between, which saw it as it was, are those marked `implied` (recorded after
# every audit before them) of the same scope, less those that could not read it (`unseen`).
# A resource keeps the reasons of its last observation, to tell whether the next one differs.
_V3 = (
    "ALTER TABLE cloudguard_resources ADD COLUMN reasons TEXT",
    "ALTER TABLE cloudguard_runs ADD COLUMN implied INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE cloudguard_observations ADD COLUMN seen_until {float}",
    """CREATE TABLE cloudguard_unseen (
        resource_id {id} NOT NULL,
        run_id {id} NOT NULL,
        PRIMARY KEY (resource_id, run_id)
    )""",
    # Every observation of version 2 was stored: each holds only at its own audit, but the
    # last one of each present resource, which holds until the resource is next seen.
    "UPDATE cloudguard_observations SET seen_until = (SELECT r.at FROM cloudguard_runs r "
    "WHERE r.id = cloudguard_observations.run_id)",
    "UPDATE cloudguard_observations SET seen_until = NULL WHERE EXISTS (SELECT 1 "
    "FROM cloudguard_resources r WHERE r.id = cloudguard_observations.resource_id "
    "AND r.last_run = cloudguard_observations.run_id AND r.status = 'present')",
    "UPDATE cloudguard_resources SET reasons = (SELECT o.reasons FROM cloudguard_observations o "
    "WHERE o.resource_id = cloudguard_resources.id AND o.run_id = cloudguard_resources.last_run)",
)

# Version 4: the columns a night moves on (its last sighting, the hours and cost observed,
# how often it was seen leaking) in a narrow table of their own, one row per resource. A
# steady night rewrites each resource it sees as it was: ~60 bytes a resource there, not
# its whole row (~450: ids, names, scope, reasons), and so a seventh of the pages to write
# and commit. `cloudguard_resources` is rebuilt without them (a SQLite before 3.35 cannot
# drop a column): the same rows, ids and indexes.
_MOVED = "last_seen, last_run, observed_hours, accrued, leaked_accrued, leaking_observations"
_KEPT = (
    "id, provider, account, match_id, uid, display_id, name, kind, task_id, first_seen, "
    "last_scope, status, gone_at, gone_how, returns, verdict, billable, hourly, reasons"
)
_V4 = (
    """CREATE TABLE cloudguard_sightings (
        id {id} PRIMARY KEY,
        last_seen {float} NOT NULL,
        last_run {id} NOT NULL,
        observed_hours {float} NOT NULL,
        accrued {float} NOT NULL,
        leaked_accrued {float} NOT NULL,
        leaking_observations INTEGER NOT NULL
    )""",
    f"INSERT INTO cloudguard_sightings (id, {_MOVED}) SELECT id, {_MOVED} "
    "FROM cloudguard_resources",
    """CREATE TABLE cloudguard_resources_v4 (
        id {id} PRIMARY KEY,
        provider TEXT NOT NULL,
        account TEXT NOT NULL,
        match_id TEXT NOT NULL,
        uid TEXT NOT NULL,
        display_id TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        task_id TEXT,
        first_seen {float} NOT NULL,
        last_scope TEXT NOT NULL,
        status TEXT NOT NULL,
        gone_at {float},
        gone_how TEXT,
        returns INTEGER NOT NULL,
        verdict TEXT NOT NULL,
        billable INTEGER,
        hourly {float},
        reasons TEXT
    )""",
    f"INSERT INTO cloudguard_resources_v4 ({_KEPT}) SELECT {_KEPT} FROM cloudguard_resources",
    "DROP TABLE cloudguard_resources",
    "ALTER TABLE cloudguard_resources_v4 RENAME TO cloudguard_resources",
    "CREATE INDEX cloudguard_resources_by_identity "
    "ON cloudguard_resources (provider, account, match_id)",
    "CREATE INDEX cloudguard_resources_present ON cloudguard_resources (last_scope, status)",
    "CREATE INDEX cloudguard_resources_by_task ON cloudguard_resources (task_id)",
)

MIGRATIONS: dict[int, tuple[str, ...]] = {1: _V1, 2: _V2, 3: _V3, 4: _V4}
CURRENT = max(MIGRATIONS)


def statements(version: int, types: Types) -> list[str]:
    return [sql.format(id=types.id, float=types.float) for sql in MIGRATIONS[version]]


def migrate(database: Database) -> int:
    """Bring the store to CURRENT; the version it was at before (0: it was new)."""
    with database.guarded():
        with database.read():
            found = _version(database)
        if found == CURRENT:
            return found
        with database.write():
            found = _version(database)  # again, under the lock: another may have migrated
            if found > CURRENT:
                raise HistoryTooNew(
                    database.location,
                    f"written by a newer cloudguard (schema version {found}; this one knows "
                    f"up to {CURRENT}): upgrade cloudguard-ci to use it",
                )
            for version in range(found + 1, CURRENT + 1):
                for sql in statements(version, database.types):
                    database.execute(sql)
            if found == 0:
                database.execute("INSERT INTO cloudguard_schema (version) VALUES (?)", (CURRENT,))
            else:
                database.execute("UPDATE cloudguard_schema SET version = ?", (CURRENT,))
        return found


def _version(database: Database) -> int:
    tables = database.tables()
    if VERSION_TABLE not in tables:
        if any(name.startswith("cloudguard_") for name in tables) or (
            tables and not database.shared
        ):
            raise HistoryCorrupt(
                database.location,
                f"has tables but no {VERSION_TABLE} table: not a cloudguard history; "
                "left as it is (name another file or database)",
            )
        return 0
    versions = database.rows("SELECT version FROM cloudguard_schema")
    if len(versions) != 1 or not isinstance(versions[0][0], int):
        raise HistoryCorrupt(
            database.location, f"{VERSION_TABLE} holds {versions!r}, not one version number"
        )
    return int(versions[0][0])

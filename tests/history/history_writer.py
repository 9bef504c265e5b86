"""A child process that records one audit into a store, for the concurrency and kill tests.

    python history_writer.py LOCATION --day N --names P:COUNT [--names ...]
        [--scope S] [--pause-after K] [--announce] [--small-cache]

It uses the real store on a real backend; the test's only hooks are where it
says so on stdout: `locking` when it asks for the write lock, `mid-write`
after K observation rows are written inside the open transaction (it then
waits for a line on stdin before writing the rest), and at the end one JSON
line with what was recorded. A HistoryError is printed on stderr, exit 75.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from history_helpers import audit, observed

from cloudguard.history.database import Database, Row
from cloudguard.history.errors import HistoryError
from cloudguard.history.postgresql import PostgresDatabase, is_postgresql_url
from cloudguard.history.sqlite import SqliteDatabase
from cloudguard.history.store import HistoryStore


def hooked(base: type[Database], options: argparse.Namespace) -> type[Database]:
    class Hooked(base):  # type: ignore[valid-type,misc]
        def write(self) -> AbstractContextManager[None]:
            if options.announce:
                _say("locking")
            return super().write()  # type: ignore[no-any-return]

        def insert_many(self, table: str, columns: Any, rows: Iterable[Row]) -> None:
            if table != "cloudguard_observations" or options.pause_after is None:
                super().insert_many(table, columns, rows)
                return
            rows = list(rows)
            super().insert_many(table, columns, rows[: options.pause_after])
            _say("mid-write")
            sys.stdin.readline()
            super().insert_many(table, columns, rows[options.pause_after :])

    return Hooked


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _names(specs: list[str]) -> Iterator[str]:
    for spec in specs:
        prefix, count = spec.split(":")
        yield from (f"{prefix}-{n}" for n in range(int(count)))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("location")
    parser.add_argument("--day", type=float, required=True)
    parser.add_argument("--names", action="append", default=[])
    parser.add_argument("--scope", default="nightly")
    parser.add_argument("--pause-after", type=int)
    parser.add_argument("--announce", action="store_true")
    parser.add_argument("--small-cache", action="store_true")
    options = parser.parse_args()
    try:
        if is_postgresql_url(options.location):
            database = hooked(PostgresDatabase, options)(options.location, busy_timeout=120)
        else:
            database = hooked(SqliteDatabase, options)(Path(options.location), busy_timeout=120)
            if options.small_cache:
                # Uncommitted pages spill into the WAL file: the kill lands mid-write on disk.
                database.execute("PRAGMA cache_size=20")
        store = HistoryStore(database)
        recorded = audit(
            store, options.day, [observed(name) for name in _names(options.names)],
            scope=options.scope,
        )  # fmt: skip
    except HistoryError as error:
        print(error, file=sys.stderr)
        return 75
    changes = Counter(history.change for history in recorded.findings.values())
    _say(json.dumps({"run": recorded.run_id, "changes": changes, "gone": len(recorded.gone)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

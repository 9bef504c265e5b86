"""The default backend: one SQLite file, in WAL mode, created on first use.

The file is the user's own: created 0600 in a 0700 directory, never opened
through a symlink, refused when someone else owns it (they could rewrite the
history that decides what is "new"). Two audits may write at once: each
takes the write lock with `BEGIN IMMEDIATE` and waits for it at most the busy
timeout, so neither loses its run; past the timeout the audit says so (75)
instead of dropping its record. Commits are synchronous (`synchronous=FULL`):
a run the audit reported as recorded survives a power cut.

A file SQLite cannot read (damaged, truncated, not a database) is an error
naming it, never a reason to start a fresh history in its place.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cloudguard import private_files
from cloudguard.history.database import Database, Row, Types
from cloudguard.history.errors import (
    HistoryBusy,
    HistoryCorrupt,
    HistoryError,
    HistoryUnavailable,
)

DEFAULT_BUSY_TIMEOUT = 60.0  # seconds: far beyond one audit's write (about 1 s per 100,000)

_DAMAGED = ("SQLITE_CORRUPT", "SQLITE_NOTADB")
_BUSY = ("SQLITE_BUSY", "SQLITE_LOCKED")


class SqliteDatabase(Database):
    shared = False
    types = Types(id="INTEGER", float="REAL")  # SQLite's REAL is an 8-byte double
    driver_errors = (sqlite3.Error,)

    def __init__(self, path: Path, *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> None:
        self.location = str(path)
        self.busy_timeout = busy_timeout
        _own_file(path)
        try:
            self._connection = sqlite3.connect(
                path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as error:
            raise self.translate(error) from error
        try:
            with self.guarded():
                mode = self._write_ahead_logging()
                self.execute("PRAGMA synchronous=FULL")
                # A nightly audit reads and rewrites every row it saw: its pages stay in
                # memory (64 MiB at most) and its scratch table never touches the disk.
                self.execute("PRAGMA cache_size=-65536")
                self.execute("PRAGMA temp_store=MEMORY")
        except HistoryError:
            self._connection.close()
            raise
        if str(mode).lower() != "wal":
            self._connection.close()
            raise HistoryUnavailable(self.location, f"cannot use write-ahead logging ({mode})")

    def _write_ahead_logging(self) -> str:
        """`PRAGMA journal_mode=WAL`, asked again until the busy timeout while another
        connection writes: a new store's first switch to WAL needs it alone, and SQLite
        answers SQLITE_BUSY at once, without its busy handler, when another connection
        holds the write lock (two first uses of a new store at once: one of them failed
        "busy for longer than the busy timeout" within a millisecond)."""
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                return str(self.value("PRAGMA journal_mode=WAL"))
            except sqlite3.OperationalError as error:
                busy = getattr(error, "sqlite_errorname", "").startswith(_BUSY)
                if not busy or time.monotonic() >= deadline:
                    raise
            time.sleep(0.01)

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._transaction("BEGIN IMMEDIATE"):
            yield

    @contextmanager
    def read(self) -> Iterator[None]:
        with self._transaction("BEGIN"):
            yield

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[None]:
        self._connection.execute(begin)
        try:
            yield
        except BaseException:
            if self._connection.in_transaction:
                self._connection.execute("ROLLBACK")
            raise
        self._connection.execute("COMMIT")

    def execute(self, sql: str, params: Row = ()) -> None:
        self._connection.execute(sql, params)

    def execute_many(self, sql: str, rows: Iterable[Row]) -> None:
        self._connection.executemany(sql, rows)

    def rows(self, sql: str, params: Row = ()) -> list[tuple[Any, ...]]:
        return self._connection.execute(sql, params).fetchall()

    def insert_many(self, table: str, columns: Sequence[str], rows: Iterable[Row]) -> None:
        marks = ", ".join("?" * len(columns))
        self._connection.executemany(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows
        )

    def update_many(self, table: str, columns: Sequence[str], rows: Iterable[Row]) -> None:
        assignments = ", ".join(f"{column} = ?" for column in columns)
        self._connection.executemany(f"UPDATE {table} SET {assignments} WHERE id = ?", rows)

    def tables(self) -> set[str]:
        return {name for (name,) in self.rows("SELECT name FROM sqlite_master WHERE type='table'")}

    def translate(self, error: BaseException) -> HistoryError:
        name = getattr(error, "sqlite_errorname", "")
        if name.startswith(_DAMAGED):
            return HistoryCorrupt(
                self.location,
                f"damaged or not a database ({error}); left as it is: move it aside to start "
                "a new history, or restore it from a backup",
            )
        if name.startswith(_BUSY):
            return HistoryBusy(
                self.location,
                f"another cloudguard held it for longer than the busy timeout "
                f"({self.busy_timeout:g} s): this run was not recorded",
            )
        return HistoryUnavailable(self.location, str(error))

    def close(self) -> None:
        self._connection.close()


def _own_file(path: Path) -> None:
    """Create `path` 0600 (and its directory 0700), or check that it is the user's own file.

    SQLite opens the file by name afterwards; the check is made on the same path, in a
    directory only the user can write to when it is the default one.
    """
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            descriptor = private_files.create_new(path)
        except private_files.UnsafePathError:  # it exists: whose is it?
            # Non-blocking: a FIFO planted under the name must not hang the audit.
            descriptor = private_files.open_own(path, os.O_RDONLY | os.O_NONBLOCK)
        os.close(descriptor)
    except OSError as error:
        raise HistoryUnavailable(str(path), f"cannot be opened: {error}") from error

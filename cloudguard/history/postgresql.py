"""The shared backend: a PostgreSQL database, for audits that run on many machines.

Needs the optional `psycopg` driver (`pip install 'cloudguard-ci[postgresql]'`),
imported only when a `postgresql://` URL is configured. Writers take one
advisory transaction lock, so two audits on two machines write one after the
other as they do on SQLite, and wait for it at most the busy timeout
(`lock_timeout`). Many rows go in through `COPY`. The URL's password never
appears in a message: the store is named by its URL without it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from cloudguard.history.database import Database, Row, Types
from cloudguard.history.errors import (
    HistoryBusy,
    HistoryCorrupt,
    HistoryError,
    HistoryUnavailable,
)

SCHEMES = ("postgresql", "postgres")
INSTALL_HINT = "pip install 'cloudguard-ci[postgresql]'"
# pg_advisory_xact_lock's key for the store's write lock: "cloudgrd" as a 64-bit number.
WRITE_LOCK = int.from_bytes(b"cloudgrd", "big") - (1 << 63)
CONNECT_TIMEOUT = 10  # seconds


def is_postgresql_url(location: str) -> bool:
    """By its scheme alone: a malformed URL (`postgresql://[bad`) is still one, never a path."""
    scheme, separator, _ = location.partition("://")
    return bool(separator) and scheme.casefold() in SCHEMES


def url_problem(url: str) -> str | None:
    """Why `url` cannot be read as a URL (urllib's words), or None."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (reading it checks it)
    except ValueError as error:
        return str(error)
    return None


def redacted(url: str) -> str:
    """The URL without its password or query (which may carry one): how messages name it."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    user = f"{parts.username}@" if parts.username else ""
    netloc = f"{user}{host}" + (f":{port}" if port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _secrets(url: str) -> list[str]:
    parts = urlsplit(url)
    found = [parts.password] if parts.password else []
    found += [value for key, value in parse_qsl(parts.query) if key == "password" and value]
    return found


SIGHTINGS_FILLFACTOR = "fillfactor=50"  # as pg_class.reloptions spells it (see tune_storage)


class PostgresDatabase(Database):
    shared = True
    locks_across_hosts = True
    types = Types(id="BIGINT", float="DOUBLE PRECISION")

    def __init__(self, url: str, *, busy_timeout: float) -> None:
        if (problem := url_problem(url)) is not None:  # e.g. from url-env: no traceback
            raise HistoryUnavailable("a postgresql:// URL", f"not a valid URL: {problem}")
        self.location = redacted(url)
        self.busy_timeout = busy_timeout
        self._secrets = _secrets(url)
        try:
            import psycopg
        except ImportError:
            raise HistoryUnavailable(
                self.location, f"a PostgreSQL store needs the psycopg driver: {INSTALL_HINT}"
            ) from None
        self._psycopg = psycopg
        self.driver_errors = (psycopg.Error,)
        try:
            self._connection = psycopg.connect(
                url, autocommit=True, connect_timeout=CONNECT_TIMEOUT, application_name="cloudguard"
            )
        except psycopg.Error as error:
            raise self.translate(error) from None

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._connection.transaction():
            # Wait for the other writer at most the busy timeout, then give up loudly.
            timeout = f"{int(self.busy_timeout * 1000)}ms"
            self.execute("SELECT set_config('lock_timeout', ?, true)", (timeout,))
            self.execute("SELECT pg_advisory_xact_lock(?)", (WRITE_LOCK,))
            yield

    @contextmanager
    def read(self) -> Iterator[None]:
        with self._connection.transaction():
            self.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            yield

    def tune_storage(self) -> None:
        # A steady night rewrites each present resource's row of cloudguard_sightings. Where
        # its page has room, PostgreSQL writes the new version beside the old one (a heap-only
        # tuple: no new entry in the key's index, and the dead version pruned by a later
        # reader of the page); on full pages (the default fillfactor, 100) every row moves to
        # another page and the night adds an index entry for each. With half of each page
        # left free, the UPDATE of 90,000 steady rows took 90-105 ms of the server's CPU
        # instead of 250-360 (docs/benchmarks.md). Set once, on the first open that finds it
        # unset: a storage parameter, not a schema version (an older cloudguard reads on).
        options = self.value(
            "SELECT reloptions FROM pg_class WHERE oid = to_regclass('cloudguard_sightings')"
        )
        if SIGHTINGS_FILLFACTOR in (options or ()):
            return
        try:
            with self.write():
                self.execute(f"ALTER TABLE cloudguard_sightings SET ({SIGHTINGS_FILLFACTOR})")
        except self._psycopg.errors.InsufficientPrivilege:
            pass  # a role that may record but does not own the table: the same store, slower

    def try_lock(self, key: int) -> bool:
        # A session lock (not a transaction's): held on this connection until `unlock` or
        # until the session ends, however it ends (a crashed apply's goes with it).
        return bool(self.value("SELECT pg_try_advisory_lock(?)", (key,)))

    def unlock(self, key: int) -> None:
        self.execute("SELECT pg_advisory_unlock(?)", (key,))

    def execute(self, sql: str, params: Row = ()) -> None:
        self._connection.execute(_placeholders(sql), params)

    def execute_many(self, sql: str, rows: Iterable[Row]) -> None:
        with self._connection.cursor() as cursor:
            cursor.executemany(_placeholders(sql), rows)

    def rows(self, sql: str, params: Row = ()) -> list[tuple[Any, ...]]:
        return self._connection.execute(_placeholders(sql), params).fetchall()

    def insert_many(self, table: str, columns: Sequence[str], rows: Iterable[Row]) -> None:
        statement = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
        with self._connection.cursor() as cursor, cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)

    def update_many(self, table: str, columns: Sequence[str], rows: Iterable[Row]) -> None:
        staging = f"{table}_update"
        self.execute(
            f"CREATE TEMP TABLE {staging} ON COMMIT DROP AS "
            f"SELECT {', '.join(columns)}, id FROM {table} WITH NO DATA"
        )
        self.insert_many(staging, (*columns, "id"), rows)
        assignments = ", ".join(f"{column} = u.{column}" for column in columns)
        self.execute(f"UPDATE {table} t SET {assignments} FROM {staging} u WHERE t.id = u.id")
        self.execute(f"DROP TABLE {staging}")

    def tables(self) -> set[str]:
        return {
            name
            for (name,) in self.rows(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema()"
            )
        }

    def translate(self, error: BaseException) -> HistoryError:
        errors = self._psycopg.errors
        text = str(error).strip()
        for secret in self._secrets:
            text = text.replace(secret, "***")
        if isinstance(error, errors.LockNotAvailable):
            return HistoryBusy(
                self.location,
                f"another cloudguard held it for longer than the busy timeout "
                f"({self.busy_timeout:g} s): this run was not recorded",
            )
        if isinstance(error, errors.DataCorrupted | errors.IndexCorrupted):
            return HistoryCorrupt(self.location, f"the server reports damage: {text}")
        return HistoryUnavailable(self.location, text)

    def close(self) -> None:
        self._connection.close()


@cache
def _placeholders(sql: str) -> str:
    # The store's SQL has no literal "%" and marks parameters with "?".
    return sql.replace("?", "%s")

"""What the store needs of a database: one interface, a backend per engine.

The store's SQL is written once, with `?` placeholders and the few column
types named in `Types`; a backend translates both, opens its connection,
turns its driver's errors into `HistoryError`s naming the store, and offers
the operations whose fast form differs between engines: writing many rows at
once, updating many rows by id, and one statement for many rows of parameters.

Writers are serialised: `write()` holds the store's one write lock for the
whole transaction (SQLite `BEGIN IMMEDIATE`; PostgreSQL an advisory
transaction lock), waiting at most the busy timeout for it. Ids are assigned
by the store under that lock, the same way on both engines.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from cloudguard.history.errors import HistoryError

Row = Sequence[Any]


@dataclass(frozen=True)
class Types:
    """Column types where the engines spell them differently."""

    id: str  # a 64-bit integer key, assigned by the store
    float: str  # a double-precision number (epoch seconds, hours, money)


class Database(ABC):
    location: str  # shown in every message: a path, or a URL without its password
    types: Types
    # Whether other programs' tables may live beside the store's (a PostgreSQL database
    # may be shared; a SQLite file with tables of another program is not a history).
    shared: bool
    # The backend's driver errors, turned into a HistoryError by `translate`.
    driver_errors: tuple[type[BaseException], ...] = ()

    @abstractmethod
    def write(self) -> AbstractContextManager[None]:
        """A transaction holding the store's write lock: all of it is kept, or none."""

    @abstractmethod
    def read(self) -> AbstractContextManager[None]:
        """A transaction that sees one state of the store."""

    @abstractmethod
    def execute(self, sql: str, params: Row = ()) -> None: ...

    @abstractmethod
    def execute_many(self, sql: str, rows: Iterable[Row]) -> None:
        """`sql` once for each row of parameters."""

    @abstractmethod
    def rows(self, sql: str, params: Row = ()) -> list[tuple[Any, ...]]: ...

    @abstractmethod
    def insert_many(self, table: str, columns: Sequence[str], rows: Iterable[Row]) -> None: ...

    @abstractmethod
    def update_many(self, table: str, columns: Sequence[str], rows: Iterable[Row]) -> None:
        """Set `columns` of each row whose `id` is the row's last value."""

    @abstractmethod
    def tables(self) -> set[str]:
        """The names of the tables the store can see."""

    @abstractmethod
    def translate(self, error: BaseException) -> HistoryError: ...

    @abstractmethod
    def close(self) -> None: ...

    # Whether `try_lock` means something beyond this host: True only where every host that
    # records into the store sees the same locks (a PostgreSQL server).
    locks_across_hosts = False

    def try_lock(self, key: int) -> bool:
        """Take the session lock `key` without waiting (False: another session holds it).
        Only a backend with `locks_across_hosts` has such locks."""
        raise NotImplementedError(f"{self.location} has no locks shared between hosts")

    def unlock(self, key: int) -> None:
        raise NotImplementedError(f"{self.location} has no locks shared between hosts")

    def tune_storage(self) -> None:  # noqa: B027 (optional: only a backend with such settings)
        """Settings of the store's tables that are no part of its schema (how a backend lays
        them out); the store is the same without them, only slower. Nothing by default."""

    def value(self, sql: str, params: Row = ()) -> Any:
        found = self.rows(sql, params)
        return found[0][0] if found else None

    def guarded(self) -> AbstractContextManager[None]:
        """Driver errors inside become the store's own, naming it."""
        return _Guard(self)


class _Guard(AbstractContextManager[None]):
    def __init__(self, database: Database) -> None:
        self._database = database

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> None:
        if error is not None and isinstance(error, self._database.driver_errors):
            raise self._database.translate(error) from error

"""Where the history lives: a PostgreSQL URL, a SQLite file, or the default file.

The default is `$XDG_STATE_HOME/cloudguard/history.sqlite3` (the XDG base
directory spec's place for state that outlives a run but is not worth a
backup of its own: `~/.local/state/cloudguard/` when the variable is unset or
not an absolute path). The directory is created 0700 on first use.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from cloudguard.history.postgresql import PostgresDatabase, is_postgresql_url
from cloudguard.history.sqlite import DEFAULT_BUSY_TIMEOUT, SqliteDatabase
from cloudguard.history.store import HistoryStore

STORE_FILE = "history.sqlite3"


def default_path(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    state = environ.get("XDG_STATE_HOME", "")
    home = Path(environ["HOME"]) if environ.get("HOME") else Path.home()
    base = Path(state) if os.path.isabs(state) else home / ".local" / "state"
    return base / "cloudguard" / STORE_FILE


def open_store(
    location: str | os.PathLike[str] | None = None,
    *,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    environ: Mapping[str, str] | None = None,
) -> HistoryStore:
    """The store at `location` (a postgresql:// URL or a file path; None: the default file),
    brought to the current schema. HistoryError (did not run, 75) when it cannot be used."""
    if location is not None and is_postgresql_url(os.fspath(location)):
        return HistoryStore(PostgresDatabase(os.fspath(location), busy_timeout=busy_timeout))
    path = default_path(environ) if location is None else Path(location).expanduser()
    return HistoryStore(SqliteDatabase(path, busy_timeout=busy_timeout))

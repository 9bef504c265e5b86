"""The default store: one SQLite file of the user's, created on first use, never replaced.

A file SQLite cannot read, a database of another program, a link or another
user's file is refused naming the path, and left as it was: a fresh history
would call every known orphan "new" and forget what was paid.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from pathlib import Path

import pytest
from history_helpers import audit, observed
from named_checks import broken, raises_at

from cloudguard.history.errors import HistoryBusy, HistoryCorrupt, HistoryUnavailable
from cloudguard.history.location import default_path, open_store


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_default_store_is_made_on_first_use_in_the_state_directory(tmp_path: Path) -> None:
    environ = {"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path / "home")}
    path = tmp_path / "state" / "cloudguard" / "history.sqlite3"
    assert not path.exists()
    with open_store(environ=environ) as store:
        assert store.location == str(path)
        audit(store, 0, [observed("vm-a")])
    assert (_mode(path.parent), _mode(path)) == (0o700, 0o600)
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    with open_store(environ=environ) as store:
        assert len(store.runs()) == 1, "the second open finds the first one's history"


@pytest.mark.parametrize("state", [None, "relative/state"])
def test_without_an_absolute_xdg_state_home_it_is_under_home(state: str | None) -> None:
    environ = {"HOME": "/home/ci"} | ({"XDG_STATE_HOME": state} if state else {})
    assert default_path(environ) == Path("/home/ci/.local/state/cloudguard/history.sqlite3")


def test_a_file_that_is_no_database_is_refused_naming_it_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    garbage = b"this is not SQLite\x00" * 300
    path.write_bytes(garbage)
    with raises_at(
        "a-damaged-file-is-refused", HistoryCorrupt, "garbage opened as a store"
    ) as raised:
        open_store(path)
    assert str(path) in str(raised.value) and "move it aside" in str(raised.value)
    assert path.read_bytes() == garbage, broken("a-damaged-file-is-left-alone", "a fresh start")
    # The control: where there is no file, the same call makes a new history.
    fresh = tmp_path / "fresh.sqlite3"
    open_store(fresh).close()
    assert fresh.stat().st_size > 0


def test_a_damaged_store_is_refused_when_read_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with open_store(path) as store:
        audit(store, 0, [observed(f"vm-{n}") for n in range(3000)])
    with sqlite3.connect(path) as raw:
        page = raw.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(path.read_bytes())
    for offset in range(2 * page, len(data), page):  # every page but the schema's first
        data[offset : offset + 64] = b"\xa5" * 64
    path.write_bytes(bytes(data))
    with pytest.raises(HistoryCorrupt, match=str(path)), open_store(path) as store:
        store.timeline(observed("vm-2999").display_id)
        store.runs()
        store.offenders()
    assert path.read_bytes() == bytes(data)


def test_a_database_of_another_program_is_not_taken_for_a_history(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    with pytest.raises(HistoryCorrupt, match="not a cloudguard history"):
        open_store(path)
    with sqlite3.connect(path) as raw:
        tables = raw.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()
    assert tables == [("invoices",)]


def test_a_link_or_another_users_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.sqlite3"
    open_store(target).close()
    link = tmp_path / "history.sqlite3"
    link.symlink_to(target)
    with pytest.raises(HistoryUnavailable, match="symbolic link"):
        open_store(link)
    theirs = tmp_path / "theirs.sqlite3"
    open_store(theirs).close()
    os.chown(theirs, 65534, 65534)
    with pytest.raises(HistoryUnavailable, match="owned by uid 65534"):
        open_store(theirs)


def test_a_fifo_in_its_place_is_refused_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "history.sqlite3"
    os.mkfifo(fifo)
    with pytest.raises(HistoryUnavailable, match="not a regular file"):
        open_store(fifo)


def test_a_writer_held_up_past_the_busy_timeout_says_its_run_was_not_recorded(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.sqlite3"
    open_store(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another audit in the middle of its write
    try:
        with open_store(path, busy_timeout=0.2) as store, pytest.raises(HistoryBusy) as raised:
            audit(store, 0, [observed("vm-a")])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert str(path) in str(raised.value) and "not recorded" in str(raised.value)
    with open_store(path) as store:
        audit(store, 0, [observed("vm-a")])
        assert len(store.runs()) == 1, "once the lock is free the same record goes in"


def test_a_new_store_another_connection_is_writing_is_opened_once_the_write_ends(
    tmp_path: Path,
) -> None:
    """Two first uses of a new store at once: the first holds the write lock, the second's
    switch to write-ahead logging is answered SQLITE_BUSY at once, without SQLite's busy
    handler. It must wait for the lock as any write does, not fail in a millisecond saying
    it waited the whole busy timeout."""
    path = tmp_path / "history.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # the other first use, in its write
    release = threading.Timer(0.3, lambda: holder.execute("COMMIT"))
    release.start()
    try:
        failure: HistoryBusy | None = None
        try:
            with open_store(path, busy_timeout=30) as store:
                audit(store, 0, [observed("vm-a")])
        except HistoryBusy as busy:
            failure = busy
        assert failure is None, broken(
            "new-store-waits-for-the-lock", f"the second first use failed: {failure}"
        )
        with open_store(path) as store:
            assert len(store.runs()) == 1
    finally:
        release.join()
        holder.close()

"""The PostgreSQL store: an optional driver, a URL whose password is never shown, a bounded wait.

The core installs and runs without psycopg: only a `postgresql://` store
needs it, and without it the message says what to install.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from history_helpers import audit, changes, observed, raw_rows
from postgres_server import USER, PostgresServer

from cloudguard.history.errors import HistoryBusy, HistoryUnavailable
from cloudguard.history.location import open_store
from cloudguard.history.postgresql import WRITE_LOCK, PostgresDatabase, redacted

NO_PSYCOPG = """
import sys

class NoPsycopg:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("psycopg", "psycopg_binary", "psycopg_c"):
            raise ImportError(f"No module named {name!r} (not installed)")

sys.meta_path.insert(0, NoPsycopg())
"""

PROBE = """
from cloudguard.history.errors import HistoryError
from cloudguard.history.location import open_store

with open_store(sys.argv[1]) as store:
    print("sqlite store opened; psycopg imported:", "psycopg" in sys.modules)
try:
    open_store(sys.argv[2])
except HistoryError as error:
    print(error)
"""


@pytest.mark.parametrize("driver", ["absent", "installed"])
def test_only_a_postgresql_store_needs_the_driver(driver: str, tmp_path: Path) -> None:
    url = "postgresql://ci:s3cret-pw@127.0.0.1:9/history"  # port 9 (discard): nobody serves
    script = (NO_PSYCOPG if driver == "absent" else "import sys\n") + PROBE
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "h.sqlite3"), url],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "sqlite store opened; psycopg imported: False"
    assert lines[1].startswith("history store postgresql://ci@127.0.0.1:9/history: ")
    hint = "pip install 'cloudguard-ci[postgresql]'"
    if driver == "absent":
        assert hint in lines[1]
    else:  # the control: with the driver it got as far as the server
        assert hint not in lines[1] and "connect" in lines[1].lower()
    assert "s3cret-pw" not in result.stdout + result.stderr


def test_a_refused_login_names_the_store_without_its_password(postgres: PostgresServer) -> None:
    url = postgres.create_database("refused_login")
    wrong = url.replace(postgres.password, "not-the-password")
    with pytest.raises(HistoryUnavailable) as raised:
        open_store(wrong)
    message = str(raised.value)
    assert f"postgresql://{USER}@127.0.0.1:{postgres.port}/refused_login" in message
    assert "password authentication failed" in message
    assert "not-the-password" not in message and postgres.password not in message


def test_a_password_in_the_query_is_not_shown_either() -> None:
    shown = redacted("postgresql://ci@db.internal:5433/history?sslmode=require&password=pw1")
    assert shown == "postgresql://ci@db.internal:5433/history"


def test_a_writer_held_up_past_the_lock_timeout_says_its_run_was_not_recorded(
    postgres: PostgresServer,
) -> None:
    # The SQLite twin of this test is in test_history_sqlite_file.py.
    location = postgres.create_database("held_up")
    open_store(location).close()
    with psycopg.connect(location, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (WRITE_LOCK,))  # another audit writing
        with open_store(location, busy_timeout=0.3) as store, pytest.raises(HistoryBusy) as raised:
            audit(store, 0, [observed("vm-a")])
        holder.execute("SELECT pg_advisory_unlock(%s)", (WRITE_LOCK,))
    assert "not recorded" in str(raised.value)
    with open_store(location) as store:
        audit(store, 0, [observed("vm-a")])
        assert len(store.runs()) == 1, "once the lock is free the same record goes in"


# A test process that starts a server and is then killed (a CI time-out, Ctrl-C on xdist).
KILLED_WITH_ITS_SERVER = """
import os, sys
sys.path.insert(0, sys.argv[1])
import postgres_server
if sys.argv[2] == "without-the-parent-death-signal":
    owner = postgres_server._as_owner
    postgres_server._as_owner = lambda argv, dies_with_parent=False: owner(argv)
server = postgres_server.PostgresServer().start()
print(server.process.pid, server.root, flush=True)
os.kill(os.getpid(), 9)
"""


def _server_left_by_a_killed_test(how: str) -> tuple[int, Path]:
    done = subprocess.run(
        [sys.executable, "-c", KILLED_WITH_ITS_SERVER, str(Path(__file__).parent), how],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == -9, done.stderr
    pid, root = done.stdout.split()
    return int(pid), Path(root)


def _stops_within(pid: int, seconds: float) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state == "Z":  # stopped; only its (dead) parent's reaping is left
            return True
        time.sleep(0.05)
    return False


def test_a_killed_test_process_takes_its_server_with_it() -> None:
    """No test run leaves a PostgreSQL server behind, however it is stopped; the control is a
    server started as before (in a session of its own, no parent-death signal): it outlives
    the test that started it, so the check above it could fail."""
    import shutil
    import signal

    pid, root = _server_left_by_a_killed_test("as-the-fixture-starts-it")
    try:
        assert _stops_within(pid, 30), f"postgres {pid} still runs after its test process died"
    finally:
        shutil.rmtree(root, ignore_errors=True)
    pid, root = _server_left_by_a_killed_test("without-the-parent-death-signal")
    try:
        assert not _stops_within(pid, 2), "the control's server stopped: the test proves nothing"
    finally:
        os.kill(pid, signal.SIGINT)
        _stops_within(pid, 30)
        shutil.rmtree(root, ignore_errors=True)


# The sightings' storage (PostgresDatabase.tune_storage): a steady night's rows rewritten in
# their own pages. A row's page is the first number of its ctid.
PAGES = "SELECT id, (ctid::text::point)[0]::int FROM cloudguard_sightings ORDER BY id"
FILLFACTOR = "SELECT reloptions FROM pg_class WHERE relname = 'cloudguard_sightings'"
FLEET = [observed(f"vm-{n:04d}") for n in range(600)]  # a few pages' worth


def test_a_steady_night_rewrites_each_sighting_in_its_own_page(
    postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    location = postgres.create_database("steady_pages")
    with open_store(location) as store:
        audit(store, 0, FLEET)
        before = raw_rows(location, PAGES)
        assert set(changes(audit(store, 1, FLEET)).values()) == {"still"}
    assert raw_rows(location, FILLFACTOR) == [(["fillfactor=50"],)]
    assert raw_rows(location, PAGES) == before, "every steady row stays in its page"
    # The control: the same nights on pages left full (the tuning undone) move the rows.
    monkeypatch.setattr(PostgresDatabase, "tune_storage", lambda self: None)
    full = postgres.create_database("steady_pages_full")
    with open_store(full) as store:
        audit(store, 0, FLEET)
        full_before = raw_rows(full, PAGES)
        assert set(changes(audit(store, 1, FLEET)).values()) == {"still"}
    assert raw_rows(full, FILLFACTOR) == [(None,)]
    moved = [row for row, was in zip(raw_rows(full, PAGES), full_before, strict=True) if row != was]
    assert len(moved) > len(FLEET) / 2, "on full pages a steady night moves its rows"


def test_a_store_made_before_the_tuning_gets_it_on_its_next_open(postgres: PostgresServer) -> None:
    location = postgres.create_database("tuned_later")
    open_store(location).close()
    with psycopg.connect(location, autocommit=True) as raw:
        raw.execute("ALTER TABLE cloudguard_sightings RESET (fillfactor)")
    assert raw_rows(location, FILLFACTOR) == [(None,)]  # as a store of an earlier cloudguard
    open_store(location).close()
    assert raw_rows(location, FILLFACTOR) == [(["fillfactor=50"],)]


def test_a_role_that_does_not_own_the_tables_records_all_the_same(
    postgres: PostgresServer,
) -> None:
    location = postgres.create_database("not_owner")
    open_store(location).close()
    role, password = f"recorder_{uuid.uuid4().hex[:8]}", "recorder-pw"  # roles span databases
    with psycopg.connect(location, autocommit=True) as raw:
        raw.execute("ALTER TABLE cloudguard_sightings RESET (fillfactor)")
        raw.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        raw.execute(f"GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO {role}")
        raw.execute(f"GRANT TEMPORARY ON DATABASE not_owner TO {role}")
    recorder = location.replace(f"{USER}:{postgres.password}@", f"{role}:{password}@")
    with open_store(recorder) as store:
        assert changes(audit(store, 0, [observed("vm-a")])) == {"vm-a": "new"}
        assert changes(audit(store, 1, [observed("vm-a")])) == {"vm-a": "still"}
    # It was refused the tuning (its owner's to set), and recorded without it.
    assert raw_rows(location, FILLFACTOR) == [(None,)]

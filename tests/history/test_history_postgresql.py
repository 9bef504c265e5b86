"""The PostgreSQL store: an optional driver, a URL whose password is never shown, a bounded wait.

The core installs and runs without psycopg: only a `postgresql://` store
needs it, and without it the message says what to install.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from history_helpers import audit, observed
from postgres_server import USER, PostgresServer

from cloudguard.history.errors import HistoryBusy, HistoryUnavailable
from cloudguard.history.location import open_store
from cloudguard.history.postgresql import WRITE_LOCK, redacted

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

"""Two audits at once lose nothing; an audit killed mid-write leaves the store as it was.

Real processes on one SQLite file and on one PostgreSQL database. The writer
(history_writer.py) says on stdout when it asks for the write lock and when
it is in the middle of writing its observations; the tests act on those
words, never on time.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from history_helpers import audit, changes, observed
from named_checks import broken

from cloudguard.history.location import open_store
from cloudguard.history.store import HistoryStore

HERE = Path(__file__).resolve().parent
SHARED, FIRST_ONLY, SECOND_ONLY = 300, 200, 100


def _writer(location: str, *args: str) -> subprocess.Popen[str]:
    # This directory for the helpers, after whatever the session puts first (a mutant copy).
    path = [p for p in (os.environ.get("PYTHONPATH"), str(HERE)) if p]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    return subprocess.Popen(
        [sys.executable, str(HERE / "history_writer.py"), location, *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def _wait_for(process: subprocess.Popen[str], word: str) -> None:
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if line != word:
        process.kill()
        _, stderr = process.communicate()
        raise AssertionError(f"the writer said {line!r}, not {word!r}: {stderr}")


def _finished(process: subprocess.Popen[str], what: str) -> dict[str, Any]:
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, broken(
        "both-audits-recorded", f"{what} lost its run (exit {process.returncode}): {stderr}"
    )
    return dict(json.loads(stdout.strip().splitlines()[-1]))


def _seeded(location: str) -> None:
    with open_store(location) as store:
        audit(store, 0, [observed(f"shared-{n}") for n in range(SHARED)])


def test_two_audits_at_once_are_both_recorded_one_after_the_other(location: str) -> None:
    _seeded(location)
    first = _writer(location, "--day", "1", "--names", f"shared:{SHARED}",
                    "--names", f"first:{FIRST_ONLY}", "--pause-after", "100")  # fmt: skip
    _wait_for(first, "mid-write")  # it holds the write lock, half its observations written
    second = _writer(location, "--day", "1.5", "--names", f"shared:{SHARED}",
                     "--names", f"second:{SECOND_ONLY}", "--announce")  # fmt: skip
    _wait_for(second, "locking")  # it asks for the lock while the first holds it
    assert first.stdin is not None
    first.stdin.write("\n")
    first.stdin.flush()

    one = _finished(first, "the first audit")
    two = _finished(second, "the second audit")
    assert one["changes"] == {"still": SHARED, "new": FIRST_ONLY}
    # The second audit read the store after the first had committed: it knows the first
    # audit's resources, and calls the ones it did not see gone.
    assert two["changes"] == {"still": SHARED, "new": SECOND_ONLY}
    assert two["gone"] == FIRST_ONLY
    with open_store(location) as store:
        runs = {run.id: run for run in store.runs()}
        assert len(runs) == 3
        assert (runs[one["run"]].findings, runs[two["run"]].findings) == (
            SHARED + FIRST_ONLY,
            SHARED + SECOND_ONLY,
        )
        (shared,) = store.timeline(observed("shared-7").display_id)
        assert len(shared.entries) == 3, "every audit's observation of it is kept"


def test_an_audit_killed_mid_write_leaves_the_store_as_it_was(backend: str, location: str) -> None:
    _seeded(location)
    wal = Path(location + "-wal")
    writer = _writer(location, "--day", "1", "--names", "killed:20000", "--pause-after", "15000",
                     "--small-cache")  # fmt: skip
    _wait_for(writer, "mid-write")
    if backend == "sqlite":
        assert wal.stat().st_size > 0, "the kill must land with uncommitted pages on disk"
    writer.send_signal(signal.SIGKILL)
    writer.wait()

    if backend == "sqlite":
        with sqlite3.connect(location) as raw:
            assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    with open_store(location) as store:
        _assert_as_seeded(store)
        after = audit(store, 2, [observed("shared-1"), observed("killed-1")])
        assert changes(after) == {"shared-1": "still", "killed-1": "new"}
        assert len(after.gone) == SHARED - 1


def _assert_as_seeded(store: HistoryStore) -> None:
    runs = store.runs()
    assert [(run.id, run.findings) for run in runs] == [(1, SHARED)], broken(
        "a-killed-audit-leaves-no-trace", f"the killed audit left a trace: {runs}"
    )
    assert store.timeline(observed("killed-1").display_id) == [], broken(
        "a-killed-audit-leaves-no-trace", "the killed audit left a trace: a resource it half-wrote"
    )

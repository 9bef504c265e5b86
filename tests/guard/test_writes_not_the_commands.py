"""No false alarm from outside the run (issue 31, item 5): what the command did not write is
not its finding.

- cloudguard's own history store, written by another cloudguard process (a scheduled audit)
  while a run is under way, is not an ambient root; the trust store beside it stays one
  (the control: the same process writing the trust store is a finding).
- the run's own stdout/stderr file (`cloudguard run -- make test > test.log`, inside the
  checkout) is cloudguard's output, never a finding; another file the command writes there
  is (the control).

Under --hard, a root kept read-only inside is never the command's finding:
tests/hard/test_hard_witness.py.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from guard_helpers import git, minimal_env
from named_checks import broken

# The command says it started (the witness has looked by then), waits until the other
# process is done (its flag file), then exits.
WAIT = """
import os, sys, time
flag = sys.argv[1]
open(flag + ".started", "w").close()
deadline = time.monotonic() + 30
while not os.path.exists(flag) and time.monotonic() < deadline:
    time.sleep(0.05)
"""


def run_while(tmp_path: Path, other: object) -> subprocess.CompletedProcess[str]:
    """`cloudguard run` of a command that waits while `other` (another process's writes, run
    here in a thread) happens; `other` ends by making the flag."""
    flag = tmp_path / "flag"
    env = minimal_env(tmp_path)
    where = tmp_path / "work"
    where.mkdir()

    def then_flag() -> None:
        started = flag.with_name("flag.started")
        for _ in range(600):
            if started.exists():
                break
            time.sleep(0.05)
        assert callable(other)
        other()
        flag.write_text("done")

    process = subprocess.Popen(
        [sys.executable, "-m", "cloudguard", "run", "--", sys.executable, "-c", WAIT, str(flag)],
        env=env, cwd=where, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    writer = threading.Thread(target=then_flag)
    writer.start()
    stdout, stderr = process.communicate(timeout=60)
    writer.join()
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def a_scheduled_audit_writes_the_history(state: Path) -> None:
    """What `cloudguard audit` does to its default store: a file, its journal, a transaction."""
    state.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(state / "history.sqlite3") as database:
        database.execute("create table if not exists sweeps (at text)")
        database.execute("insert into sweeps values ('now')")
    (state / "history.sqlite3-wal").write_text("")  # a WAL store's companions too


def test_the_history_store_written_by_another_process_is_no_finding(tmp_path: Path) -> None:
    state = tmp_path / "home" / ".local" / "state" / "cloudguard"

    result = run_while(tmp_path, lambda: a_scheduled_audit_writes_the_history(state))

    assert "ambient-write" not in result.stderr, broken(
        "the-history-store-is-not-an-ambient-root",
        f"the history store written by another process was named:\n{result.stderr}",
    )
    assert result.returncode == 0, result.stderr
    assert (state / "history.sqlite3").exists()


def test_control_the_trust_store_written_by_another_process_is_a_finding(
    tmp_path: Path,
) -> None:
    """The soft run cannot tell who wrote: the trust store beside the history stays a root."""
    state = tmp_path / "home" / ".local" / "state" / "cloudguard"

    def trusts_a_file() -> None:
        a_scheduled_audit_writes_the_history(state)
        (state / "trusted.json").write_text("{}")

    result = run_while(tmp_path, trusts_a_file)

    assert f"ambient-write: {state / 'trusted.json'} created" in result.stderr, result.stderr
    assert "history.sqlite3" not in result.stderr, result.stderr
    assert result.returncode == 98, result.stderr


def test_the_runs_own_output_file_in_the_checkout_is_no_finding(tmp_path: Path) -> None:
    """`cloudguard run -- make test > test.log 2>&1`, test.log untracked and not ignored."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README").write_text("readme\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "the checkout")
    log = repo / "test.log"
    code = (
        "import os; print('testing...', flush=True); "
        "open('other.txt', 'w').write('the command wrote this'); "
        "os.link('test.log', 'conftest.py')"  # the same file, under a name of the command's
    )

    with log.open("w") as output:  # the shell's `> test.log`: made before cloudguard starts
        done = subprocess.run(
            [sys.executable, "-m", "cloudguard", "run", "--", sys.executable, "-c", code],
            env=minimal_env(tmp_path), cwd=repo, stdout=output, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, timeout=60, check=False,
        )  # fmt: skip
    said = log.read_text()

    assert "testing..." in said
    assert "test.log" not in said, broken(
        "the-runs-own-output-file-is-no-finding", f"cloudguard's own output was named:\n{said}"
    )
    # The controls: the same run's write beside it is named, and so is a second name the
    # command gave cloudguard's output file.
    assert f"tracked-write: other.txt added (checkout {repo})" in said, said
    assert f"tracked-write: conftest.py added (checkout {repo})" in said, said
    assert done.returncode == 98, said

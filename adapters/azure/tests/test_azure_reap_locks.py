"""One lock for everyone who can act: two applies of one plan, from two environments of one
account or from two hosts sharing a PostgreSQL history, send one DELETE, never two.

Each race is forced, not hoped for (as in test_azure_reaper's race): the fake ARM holds
the first apply's delete in flight, its locks held, until the second apply has ended or
sent a delete of its own.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import test_azure_reaper
from cloudguard_azure import demo
from named_checks import broken
from test_azure_reaper import Incident, digest
from trusted_config import write_trusted
from waiting import wait_until

incident = test_azure_reaper.incident  # the fake ARM's incident, as the reaper's tests have it

_TESTS = Path(__file__).resolve().parents[3] / "tests"


def _postgres_server() -> Any:
    """The history tests' throwaway PostgreSQL server (tests/history/postgres_server.py)."""
    spec = importlib.util.spec_from_file_location(
        "history_postgres_server", _TESTS / "history" / "postgres_server.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PostgresServer


@pytest.fixture(scope="module")
def postgres() -> Iterator[Any]:
    server = _postgres_server()().start()
    try:
        yield server
    finally:
        server.stop()


def _race(
    incident: Incident, plan: Path, tmp_path: Path, runs: list[tuple[Path, dict[str, str]]]
) -> tuple[int, list[subprocess.CompletedProcess[str]]]:
    """Two applies of `plan`, each from (its working directory, its environment), the
    second started while the first's delete is in flight; the DELETEs sent, and the runs."""
    incident.arm.faults.reset_counts()
    incident.arm.state.hold_operations = True
    command = [
        sys.executable, "-m", "cloudguard", "reap", "apply", str(plan), *incident.live(),
        "--controller-home", str(incident.home), "--repo", str(incident.repo),
        "--yes", "--approve", digest(plan),
    ]  # fmt: skip

    def start(n: int) -> subprocess.Popen[str]:
        work, env = runs[n]
        return subprocess.Popen(
            [*command, "--log", str(tmp_path / f"race-{n}.jsonl")],
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    deletes = "DELETE vm_delete"
    first = start(0)
    try:
        in_flight = wait_until(
            lambda: incident.arm.faults.requests[deletes] == 1 or first.poll() is not None,
            within=240,  # a loaded machine: the first apply's reads take their time
        )
        assert in_flight and first.poll() is None, (
            f"the first apply never sent its delete: {first.poll()}"
        )
        second = start(1)
        wait_until(lambda: second.poll() is not None or incident.arm.faults.requests[deletes] > 1)
    finally:
        incident.arm.state.hold_operations = False  # the barrier opens: both may end
        first_out = first.communicate(timeout=120)[0]
    second_out = second.communicate(timeout=120)[0]
    done = [
        subprocess.CompletedProcess(p.args, p.returncode, out, "")
        for p, out in ((first, first_out), (second, second_out))
    ]
    return incident.arm.faults.requests[deletes], done


def _accounts_only(work: Path, extra: str = "") -> None:
    """cloudguard.toml naming the accounts and no lock directory: the account's own."""
    write_trusted(
        work / "cloudguard.toml",
        f'[reap]\naccounts = ["{demo.SUB_PILOT}", "{demo.SUB_FLEET}"]\n{extra}',
    )


def test_a_login_shell_and_cron_applying_one_plan_send_one_delete(
    incident: Incident, tmp_path: Path
) -> None:
    """One apply as from a login shell (XDG_RUNTIME_DIR set, HOME its own), one as from cron
    (no XDG_RUNTIME_DIR, another HOME): one lock directory, the account's, so one acts."""
    plan = incident.plan("--action", "delete")
    _accounts_only(incident.work)  # the default lock directory, as users have it
    base = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "HOME")}
    (tmp_path / "xdg").mkdir(mode=0o700)
    login = {**base, "XDG_RUNTIME_DIR": str(tmp_path / "xdg"), "HOME": str(tmp_path / "a")}
    cron = {**base, "HOME": str(tmp_path / "b")}
    try:
        sent, (first, second) = _race(
            incident, plan, tmp_path, [(incident.work, login), (incident.work, cron)]
        )
    finally:  # the plan's lock file in the account's directory: no one holds it now
        from cloudguard.reap.locks import default_lock_directory

        lock = default_lock_directory() / f"plan-{digest(plan).removeprefix('sha256:')}.lock"
        lock.unlink(missing_ok=True)

    assert sent == 1, broken(
        "one-lock-for-every-environment",
        f"DELETE sent {sent} times by a login shell's and cron's apply: "
        f"{first.stdout}\n{second.stdout}",
    )
    assert (first.returncode, second.returncode) == (0, 75), f"{first.stdout}\n{second.stdout}"
    assert "another apply of this plan" in second.stdout


def test_two_hosts_sharing_a_postgresql_history_send_one_delete(
    incident: Incident, tmp_path: Path, postgres: Any
) -> None:
    """Two "hosts": two applies with nothing on disk in common (each its own lock directory,
    working directory and HOME), one PostgreSQL history. The store's lock holds: one acts."""
    plan = incident.plan("--action", "delete")
    url = postgres.create_database(f"t_{uuid.uuid4().hex}")
    base = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "HOME")}
    runs = []
    for host in ("host-a", "host-b"):
        work, locks = tmp_path / host / "work", tmp_path / host / "locks"
        work.mkdir(parents=True)
        locks.mkdir(mode=0o700)
        _accounts_only(work, f'lock-directory = "{locks}"\n[history]\nurl = "{url}"\n')
        runs.append((work, {**base, "HOME": str(tmp_path / host)}))

    sent, (first, second) = _race(incident, plan, tmp_path, runs)

    assert sent == 1, broken(
        "one-lock-for-every-host",
        f"DELETE sent {sent} times by two hosts' applies: {first.stdout}\n{second.stdout}",
    )
    assert (first.returncode, second.returncode) == (0, 75), f"{first.stdout}\n{second.stdout}"
    assert "another apply of this plan" in second.stdout and "postgresql://" in second.stdout
    assert postgres.password not in second.stdout


def test_two_hosts_without_a_shared_store_are_not_told_apart(
    incident: Incident, tmp_path: Path
) -> None:
    """The control of the test above, by construction: the same two hosts with a history of
    their own each (SQLite) share no lock, and both act. What the store's lock prevents."""
    plan = incident.plan("--action", "delete")
    base = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "HOME")}
    runs = []
    for host in ("host-a", "host-b"):
        work, locks = tmp_path / host / "work", tmp_path / host / "locks"
        work.mkdir(parents=True)
        locks.mkdir(mode=0o700)
        _accounts_only(work, f'lock-directory = "{locks}"\n')
        runs.append((work, {**base, "HOME": str(tmp_path / host)}))

    sent, _ = _race(incident, plan, tmp_path, runs)

    assert sent == 2  # each its own lock, both act: why hosts need the store's

"""Two applies of one plan on Google Cloud, raced: one delete is sent, never two.

The race is forced, not hoped for: the fake holds the first apply's delete request unanswered
(its locks held, the instance still there) until the second apply has ended or sent a delete
of its own. Both applies
are `python -m cloudguard reap apply` processes, as two shells would run them, through the
real google-cloud-compute clients against the fake on 127.0.0.1.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_gcp import serve
from gcp_reaping import Fleet, digest, make_fleet
from named_checks import broken
from waiting import wait_until


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Fleet]:
    with serve() as gcp:
        yield make_fleet(gcp, tmp_path, monkeypatch)


def test_two_applies_of_one_plan_send_one_delete(fleet: Fleet, tmp_path: Path) -> None:
    plan = fleet.plan("--action", "delete")
    gcp = fleet.gcp
    release = threading.Event()

    def hold_the_first_delete(operation: str) -> None:  # in the fake's request thread
        if operation == "instances.delete":
            if gcp.counts["instances.delete"] == 1:
                release.wait(240)
            else:
                release.set()  # a second delete: the race is lost, let both end

    gcp.before = hold_the_first_delete
    command = [
        sys.executable, "-m", "cloudguard", "reap", "apply", str(plan), *fleet.live(),
        "--controller-home", str(fleet.home), "--grace", "0s", "--yes",
        "--approve", digest(plan),
    ]  # fmt: skip

    def start(n: int) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*command, "--log", str(tmp_path / f"race-{n}.jsonl")],
            cwd=fleet.work, env=dict(os.environ), text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip

    def deletes() -> int:
        return gcp.counts["instances.delete"]

    first = start(0)
    try:
        in_flight = wait_until(lambda: deletes() == 1 or first.poll() is not None, within=240)
        assert in_flight and first.poll() is None, (
            f"the first apply never sent its delete: {first.poll()}"
        )
        second = start(1)
        wait_until(lambda: second.poll() is not None or deletes() > 1, within=240)
    finally:
        release.set()  # the barrier opens: both may end
        first_out = first.communicate(timeout=240)[0]
    second_out = second.communicate(timeout=240)[0]

    assert deletes() == 1, broken(
        "one-delete-for-two-applies", f"delete sent {deletes()} times:\n{first_out}\n{second_out}"
    )
    assert (first.returncode, second.returncode) == (0, 75), f"{first_out}\n{second_out}"
    assert "another apply of this plan" in second_out, second_out

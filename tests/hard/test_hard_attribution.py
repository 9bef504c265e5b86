"""How the sink names a sender, on real processes without namespaces: what the cheaper reads and
the numbers of parents it holds must still say exactly."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping

import pytest
from named_checks import broken

from cloudguard.guard.hard import attribution

SLEEPER = "import time; print('ready', flush=True); time.sleep(60)"


@pytest.fixture
def start() -> Iterator[object]:
    started: list[subprocess.Popen[bytes]] = []

    def run(*argv: str, env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
        started.append(subprocess.Popen(argv, env=env, stdout=subprocess.PIPE))
        assert started[-1].stdout is not None
        assert started[-1].stdout.readline() == b"ready\n"  # running its own program now
        return started[-1]

    yield run
    for process in started:
        process.kill()
        process.wait()


def test_a_senders_test_is_its_first_cloudguard_test_else_its_last_pytest_current_test(
    start,  # type: ignore[no-untyped-def]
) -> None:
    named = {
        "pytest's, then the plugin's": (
            {"PYTEST_CURRENT_TEST": "t.py::a (call)", "CLOUDGUARD_TEST": "t.py::b"},
            "t.py::b",
        ),
        "pytest's alone": ({"PYTEST_CURRENT_TEST": "t.py::c (setup)"}, "t.py::c (setup)"),
        "neither": ({"XCLOUDGUARD_TEST": "t.py::d", "CLOUDGUARD_TESTS": "t.py::e"}, ""),
    }
    for what, (variables, test) in named.items():
        child = start(sys.executable, "-c", SLEEPER, env={"PATH": "/usr/bin", **variables})
        sender = attribution.describe(child.pid, "")
        assert sender.test == test, f"{what}: {sender.test!r}"
        assert sender.argv == [os.fsencode(sys.executable), b"-c", SLEEPER.encode()], what


def test_a_parents_number_is_served_only_while_its_process_lives(start) -> None:  # type: ignore[no-untyped-def]
    """The sink holds each parent's number inside by a pidfd of the process it read it for: a
    parent that exited and was reaped (its number free for another process) is read afresh,
    never served from what was held."""
    parents = attribution.Parents()
    parent = start(sys.executable, "-c", SLEEPER)
    assert parents.inner(parent.pid) == parent.pid  # one pid namespace here: the same number
    assert parents.inner(parent.pid) == parent.pid  # held, and served while it lives

    parent.kill()
    parent.wait()  # reaped: the number may now name another process

    assert parents.inner(parent.pid) is None, broken(
        "a-gone-parent-is-not-served",
        f"the number {parent.pid} was served for a parent that is gone",
    )
    parents.close()


def test_a_sender_is_named_alike_with_and_without_the_parents_held(start) -> None:  # type: ignore[no-untyped-def]
    child = start(sys.executable, "-c", SLEEPER)
    parents = attribution.Parents()
    for _ in range(2):
        held = attribution.describe(child.pid, "", parents)
        fresh = attribution.describe(child.pid, "")
        assert (held.pid, held.ppid, held.argv, held.cwd, held.test) == (
            fresh.pid,
            fresh.ppid,
            fresh.argv,
            fresh.cwd,
            fresh.test,
        )
        assert (held.pid, held.ppid) == (child.pid, os.getpid())
    parents.close()

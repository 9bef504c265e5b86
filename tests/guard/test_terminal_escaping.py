"""Every value from outside reaches the terminal escaped (cloudguard.escape.one_line).

argv, targets, test names and working directories are chosen by whoever
runs the command or names the test: an escape sequence must not repaint the
operator's terminal, a newline must not forge a line of cloudguard's output.
"""

from __future__ import annotations

import os
from pathlib import Path

from guard_helpers import cloudguard, minimal_env
from named_checks import broken

from cloudguard.guard import alarm, reach

CLEAR_SCREEN = "\x1b[2J"
FORGED = "\ncloudguard: the run is clean"


def hostile_record() -> dict[str, object]:
    return reach.reach_record(
        via="az-shim",
        argv=["az", f"vm{CLEAR_SCREEN}", f"list{FORGED}", "\u202egnp.exe"],
        target=f"az vm{CLEAR_SCREEN}",
        environ={reach.TEST_VARIABLE: f"t.py::test{FORGED}"},
    )


def test_describe_escapes_every_field() -> None:
    shown = alarm.describe(hostile_record())

    assert "\x1b" not in shown and "\u202e" not in shown, broken(
        "describe-escapes", f"a raw control reached: {shown!r}"
    )
    assert "cloudguard: the run is clean" not in shown.splitlines()[1:2]
    assert "\\x1b[2J" in shown and "\\x0acloudguard: the run is clean" in shown
    assert len(shown.splitlines()) == 2  # the headline and argv: nothing forged


def test_run_and_check_output_is_escaped(tmp_path: Path) -> None:
    log = tmp_path / "reach.jsonl"
    env = minimal_env(tmp_path, CLOUDGUARD_TEST=f"t.py::test{FORGED}")
    argv = ["az", f"vm{CLEAR_SCREEN}", f"list{FORGED}"]

    ran = cloudguard("run", "--log", str(log), "--", *argv, env=env)
    checked = cloudguard("check", "--log", str(log), env=env)

    assert ran.returncode == 98 and checked.returncode == 98, ran.stderr + checked.stderr
    for output in (ran.stderr, checked.stderr):
        assert "\x1b" not in output, broken(
            "output-escaped", f"a raw escape sequence reached the terminal: {output!r}"
        )
        forged = [line for line in output.splitlines() if line == "cloudguard: the run is clean"]
        assert forged == [], f"a value forged a line of output: {output!r}"
    assert "\\x1b[2J" in checked.stderr  # shown, escaped: the control that it is there


def test_a_hostile_log_path_is_escaped(tmp_path: Path) -> None:
    missing = tmp_path / f"gone{CLEAR_SCREEN}.jsonl"

    result = cloudguard("check", "--log", os.fspath(missing), env=minimal_env(tmp_path))

    assert result.returncode == 97
    assert "\x1b" not in result.stderr and "gone\\x1b[2J" in result.stderr

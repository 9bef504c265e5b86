"""A test that tampers with the plugin's reach log changes no verdict, and is named for it.

Each case runs a real inner pytest session (`--cloudguard`, its own seal,
record keeper and log) whose test makes a reach through the refusing `az`
shim and then truncates, deletes or tears the log. The keeper holds the
record in memory: the test still fails naming the reach, its report also
names the tampering, and the session exits 98: never a green run.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from guard_helpers import minimal_env
from named_checks import broken

from cloudguard import exit_codes

INNER = """
import os, subprocess

def reach():
    log = os.environ["CLOUDGUARD_REACH_LOG"]
    before = os.stat(log).st_size
    subprocess.run(["az", "vm", "list"], stderr=subprocess.DEVNULL)
    return log, before

def test_tampers():
    log, before = reach()
    {tamper}

def test_clean_after():
    pass
"""
REACHED = "this test reached a real cloud: az-shim"
ALTERED = "tampering: the reach log was altered while the run was on"
TAMPERING = {
    "truncate": "os.truncate(log, before)",
    "delete": "os.unlink(log)",
    "tear": 'open(log, \'ab\').write(b\'{{"schema": 1, "kind": "reach"\')',
    "nothing": "pass",  # the control
}


def inner_session(tmp_path: Path, tamper: str) -> tuple[int, dict[str, str | None], str]:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_inner.py").write_text(INNER.format(tamper=tamper))
    junit = tmp_path / "junit.xml"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
         "--cloudguard", f"--junitxml={junit}", "test_inner.py"],
        cwd=tmp_path, env=minimal_env(tmp_path), capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    verdicts: dict[str, str | None] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        failures = [c.text or "" for c in case if c.tag in ("failure", "error")]
        verdicts[case.get("name", "")] = "\n".join(failures) if failures else None
    return result.returncode, verdicts, result.stdout + result.stderr


@pytest.mark.parametrize("how", ["truncate", "delete", "tear"])
def test_a_test_that_tampers_with_the_log_fails_naming_both_and_the_session_is_98(
    tmp_path: Path, how: str
) -> None:
    code, verdicts, output = inner_session(tmp_path, TAMPERING[how])

    failure = verdicts["test_tampers"]
    assert failure is not None, f"the tampering test passed ({how}):\n{output}"
    assert REACHED in failure, failure
    assert ALTERED in failure and "failing closed" in failure, broken(
        "the-tampering-is-named", f"the tampering was not named ({how}):\n{failure}"
    )
    assert verdicts["test_clean_after"] is None, output
    assert code == exit_codes.REACH_REFUSED, f"session exited {code} ({how}):\n{output}"


def test_control_the_same_reach_untampered_fails_the_test_and_the_session_is_98(
    tmp_path: Path,
) -> None:
    code, verdicts, output = inner_session(tmp_path, TAMPERING["nothing"])

    assert REACHED in (verdicts["test_tampers"] or ""), output
    assert ALTERED not in output, output
    assert verdicts["test_clean_after"] is None
    assert code == exit_codes.REACH_REFUSED, output


UNDER_RUN = """
import os, subprocess

def test_replaces_the_log():
    log = os.environ["CLOUDGUARD_REACH_LOG"]
    subprocess.run(["az", "vm", "list"], stderr=subprocess.DEVNULL)
    data = open(log, "rb").read()
    header = data.split(b"\\n")[0] + b"\\n"
    with open(log + ".new", "wb") as copy:  # the same size, without the record
        copy.write(header + b" " * (len(data) - len(header) - 1) + b"\\n")
    os.replace(log + ".new", log)

def test_clean_after():
    pass
"""


def test_under_run_a_test_that_replaces_the_log_fails_and_the_run_is_98(tmp_path: Path) -> None:
    # A session under `cloudguard run` joins the run's seal: the run keeps the records, and
    # the session reads the run's log for its own tests, watching it.
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_inner.py").write_text(UNDER_RUN)
    junit = tmp_path / "junit.xml"
    result = subprocess.run(
        [sys.executable, "-m", "cloudguard", "run", "--log", str(tmp_path / "reach.jsonl"), "--",
         sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
         f"--junitxml={junit}", "test_inner.py"],
        cwd=tmp_path, env=minimal_env(tmp_path), capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    failure = "".join(c.text or "" for c in cases["test_replaces_the_log"])

    assert "was replaced by another file while armed" in failure, broken(
        "the-replacing-test-fails",
        f"the test that replaced the log was not failed for it:\n{result.stderr}",
    )
    assert result.returncode == exit_codes.REACH_REFUSED, result.stderr
    assert "az-shim reached `az vm list`" in result.stderr

"""The pytest plugin fails closed when a test tampers with its reach log.

Each case runs a real inner pytest session (`--cloudguard`, its own seal and
log) whose test makes a reach through the refusing `az` shim and then
truncates, deletes or tears the log. The test that did it fails with the
watch's own message and the session exits 97: never a green run.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from guard_helpers import minimal_env

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
TAMPERING = {
    "truncate": ("os.truncate(log, before)", "shrank from"),
    "delete": ("os.unlink(log)", "deleted while armed"),
    "tear": (
        'open(log, \'ab\').write(b\'{{"schema": 1, "kind": "reach"\')',
        "is torn (no newline)",
    ),
    "nothing": ("pass", "this test reached a real cloud: az-shim"),  # the control
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
        failures = [c.get("message") or "" for c in case if c.tag in ("failure", "error")]
        verdicts[case.get("name", "")] = "\n".join(failures) if failures else None
    return result.returncode, verdicts, result.stdout + result.stderr


@pytest.mark.parametrize("how", ["truncate", "delete", "tear"])
def test_a_test_that_tampers_with_the_log_fails_and_the_session_is_97(
    tmp_path: Path, how: str
) -> None:
    tamper, named = TAMPERING[how]

    code, verdicts, output = inner_session(tmp_path, tamper)

    failure = verdicts["test_tampers"]
    assert failure is not None, f"the tampering test passed ({how}):\n{output}"
    assert named in failure and "failing closed" in failure, failure
    assert code == exit_codes.REFUSED_ADMISSION, f"session exited {code} ({how}):\n{output}"


def test_control_the_same_reach_untampered_fails_the_test_and_the_session_is_98(
    tmp_path: Path,
) -> None:
    tamper, named = TAMPERING["nothing"]

    code, verdicts, output = inner_session(tmp_path, tamper)

    assert named in (verdicts["test_tampers"] or ""), output
    assert verdicts["test_clean_after"] is None
    assert code == exit_codes.REACH_REFUSED, output

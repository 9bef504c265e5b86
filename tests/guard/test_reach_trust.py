"""The reach log is the record keeper's report: nobody else makes it, and nothing done to it
changes the verdict.

Created O_EXCL|O_NOFOLLOW with mode 0600; continued only when it is the
caller's own. The run's keeper holds every record in memory and writes the
log itself: a log truncated, replaced or deleted after a reach is still a
red run (98), the alteration is named, and the keeper writes its records
back. (The attacks on the keeper itself: test_verdict_integrity.py.)
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from guard_helpers import child, cloudguard, minimal_env
from named_checks import broken
from second_uid import another_users_file, guard_run_script, run_guard

from cloudguard.documents import reach_log
from cloudguard.guard import alarm, reach

# A sealed command that makes a reach (the refusing az shim records it), then puts the
# log back the way it found it: the within-one-uid attack on the alarm.
RECORD_THEN_TRUNCATE = """
import os, subprocess
log = os.environ["CLOUDGUARD_REACH_LOG"]
before = os.stat(log).st_size
subprocess.run(["az", "vm", "list"], stderr=subprocess.DEVNULL)
assert os.stat(log).st_size > before, "the shim did not record"
os.truncate(log, before)
"""
RECORD_THEN_REPLACE = """
import os, subprocess
log = os.environ["CLOUDGUARD_REACH_LOG"]
header = open(log, "rb").readline()
subprocess.run(["az", "vm", "list"], stderr=subprocess.DEVNULL)
with open(log + ".new", "wb") as fresh:
    fresh.write(header)
os.replace(log + ".new", log)
"""
RECORD_THEN_DELETE = """
import os, subprocess
subprocess.run(["az", "vm", "list"], stderr=subprocess.DEVNULL)
os.unlink(os.environ["CLOUDGUARD_REACH_LOG"])
"""


def test_arm_creates_a_private_file_and_never_an_existing_one(tmp_path: Path) -> None:
    log = tmp_path / "reach.jsonl"
    alarm.arm(str(log), by="test")
    assert stat.S_IMODE(log.stat().st_mode) == 0o600

    with pytest.raises(OSError, match="already exists"):
        alarm.arm(str(log), by="test")


def test_a_dangling_symlink_never_makes_a_file_of_the_planters_choosing(tmp_path: Path) -> None:
    chosen = tmp_path / "victims-file"
    link = tmp_path / "reach.jsonl"
    link.symlink_to(chosen)

    result = cloudguard("run", "--log", str(link), "--", "true", env=minimal_env(tmp_path))

    assert result.returncode == 97, result.stderr
    assert "symbolic link" in result.stderr
    assert not chosen.exists(), "cloudguard created the file the link points at"


def test_a_symlink_to_an_armed_log_is_not_followed(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    alarm.arm(str(real), by="someone")
    link = tmp_path / "reach.jsonl"
    link.symlink_to(real)

    result = cloudguard("run", "--log", str(link), "--", "true", env=minimal_env(tmp_path))

    assert result.returncode == 97, f"a symlinked log was continued: {result.stderr}"
    assert "symbolic link" in result.stderr, broken(
        "a-linked-log-is-refused-as-a-link", f"not refused as a symbolic link: {result.stderr}"
    )


def test_another_users_armed_log_is_not_continued(second_user: Path) -> None:
    """Run by the second user (uid 65534) on an armed log of ours it could write (0666)."""
    armed = second_user / "armed.jsonl"
    alarm.arm(str(armed), by="another user")
    theirs = another_users_file(second_user, "reach.jsonl", armed.read_bytes())
    before = theirs.read_bytes()

    result = run_guard(
        second_user, guard_run_script(["true"], theirs), env={"PATH": "/usr/bin:/bin"}
    )

    assert result.returncode == 97, broken(
        "another-users-log-refused", f"another user's log was continued: {result.stderr}"
    )
    assert f"owned by uid {os.geteuid()}" in result.stderr, result.stderr
    assert theirs.read_bytes() == before


def test_an_own_armed_log_is_continued_and_an_own_empty_file_is_armed(tmp_path: Path) -> None:
    log = tmp_path / "reach.jsonl"
    log.touch(mode=0o600)

    first = cloudguard("run", "--log", str(log), "--", "true", env=minimal_env(tmp_path))
    again = cloudguard("run", "--log", str(log), "--", "true", env=minimal_env(tmp_path))

    assert (first.returncode, again.returncode) == (0, 0), first.stderr + again.stderr
    assert reach_log.read(str(log)).header["by"] == "cloudguard run"


def test_writers_never_follow_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    alarm.arm(str(real), by="test")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    record = reach.reach_record(via="test", argv=[], target="x")

    status = reach.record_status(record, log=str(link))

    assert status.startswith("NOT recorded"), status
    assert reach_log.read(str(real)).reaches == ()


def sealed_run(tmp_path: Path, script: str) -> subprocess.CompletedProcess[str]:
    log = tmp_path / "reach.jsonl"
    return cloudguard("run", "--log", str(log), "--", *child(script), env=minimal_env(tmp_path))


def _altered_and_red(tmp_path: Path, script: str) -> None:
    result = sealed_run(tmp_path, script)

    assert result.returncode == 98, broken(
        "an-altered-log-is-still-red", f"the reach was not judged: {result.stderr}"
    )
    assert "tampering: the reach log was altered while the run was on" in result.stderr, broken(
        "the-alteration-is-named", f"the alteration was not named: {result.stderr}"
    )
    assert [r["target"] for r in reach_log.read(str(tmp_path / "reach.jsonl")).reaches] == [
        "az vm list"
    ], "the keeper did not write its record back"


def test_a_reach_then_a_truncation_back_to_the_start_is_still_red(tmp_path: Path) -> None:
    _altered_and_red(tmp_path, RECORD_THEN_TRUNCATE)


def test_control_without_the_truncation_the_same_reach_is_98_and_nothing_is_altered(
    tmp_path: Path,
) -> None:
    result = sealed_run(tmp_path, RECORD_THEN_TRUNCATE.replace("os.truncate(log, before)", "pass"))

    assert result.returncode == 98, result.stderr
    assert "tampering" not in result.stderr, result.stderr


def test_a_log_replaced_after_a_reach_is_still_red(tmp_path: Path) -> None:
    _altered_and_red(tmp_path, RECORD_THEN_REPLACE)


def test_a_log_deleted_after_a_reach_is_still_red(tmp_path: Path) -> None:
    _altered_and_red(tmp_path, RECORD_THEN_DELETE)


def test_a_log_altered_with_no_reach_is_97(tmp_path: Path) -> None:
    script = "import os; os.truncate(os.environ['CLOUDGUARD_REACH_LOG'], 0)"
    result = sealed_run(tmp_path, script)

    assert result.returncode == 97, result.stderr
    assert "the reach log was altered while the run was on" in result.stderr

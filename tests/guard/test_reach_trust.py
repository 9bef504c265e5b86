"""The reach log is trusted only when nobody else could have made, swapped or shrunk it.

Created O_EXCL|O_NOFOLLOW with mode 0600; continued only when it is the
caller's own; watched by the process that armed it (inode + high-water mark
fed by every writer), so a replaced, deleted or shrunk log is 97, never green.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from guard_helpers import child, cloudguard, minimal_env

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
    assert "symbolic link" in result.stderr, f"not refused as a symbolic link: {result.stderr}"


@pytest.mark.skipif(os.geteuid() != 0, reason="making another user's file needs root")
def test_another_users_armed_log_is_not_continued(tmp_path: Path) -> None:
    theirs = tmp_path / "reach.jsonl"
    alarm.arm(str(theirs), by="another user")
    os.chown(theirs, 65534, 65534)
    before = theirs.read_bytes()

    result = cloudguard("run", "--log", str(theirs), "--", "true", env=minimal_env(tmp_path))

    assert result.returncode == 97, f"another user's log was continued: {result.stderr}"
    assert "owned by uid 65534" in result.stderr
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

    status = reach.record_status(str(link), record)

    assert status.startswith("NOT recorded"), status
    assert reach_log.read(str(real)).reaches == ()


def sealed_run(tmp_path: Path, script: str) -> subprocess.CompletedProcess[str]:
    log = tmp_path / "reach.jsonl"
    return cloudguard("run", "--log", str(log), "--", *child(script), env=minimal_env(tmp_path))


def test_a_reach_then_a_truncation_back_to_the_start_is_97_not_green(tmp_path: Path) -> None:
    result = sealed_run(tmp_path, RECORD_THEN_TRUNCATE)

    assert result.returncode == 97, f"a truncated log was not refused: {result.stderr}"
    assert "shrank from" in result.stderr and "records were removed" in result.stderr


def test_control_without_the_truncation_the_same_reach_is_98(tmp_path: Path) -> None:
    script = RECORD_THEN_TRUNCATE.replace("os.truncate(log, before)", "pass")

    assert sealed_run(tmp_path, script).returncode == 98


def test_a_log_replaced_while_armed_is_97(tmp_path: Path) -> None:
    result = sealed_run(tmp_path, RECORD_THEN_REPLACE)

    assert result.returncode == 97, f"a replaced log was not refused: {result.stderr}"
    assert "was replaced by another file while armed" in result.stderr


def test_a_log_deleted_while_armed_is_97(tmp_path: Path) -> None:
    result = sealed_run(tmp_path, RECORD_THEN_DELETE)

    assert result.returncode == 97, result.stderr
    assert "deleted while armed" in result.stderr


def test_the_watch_is_told_by_writers_in_other_processes(tmp_path: Path) -> None:
    log = tmp_path / "reach.jsonl"
    start = alarm.arm(str(log), by="test")
    watch = alarm.LogWatch(str(log))
    try:
        assert watch.witnessed
        writer = (
            "import sys; from cloudguard.guard import reach; "
            "reach.append(sys.argv[1], reach.reach_record(via='test', argv=[], target='x'))"
        )
        subprocess.run([sys.executable, "-c", writer, str(log)], check=True)
        os.truncate(log, start)  # before the watch ever looked at the grown log

        with pytest.raises(reach_log.ReachLogError, match="shrank from"):
            watch.verify()
    finally:
        watch.close()

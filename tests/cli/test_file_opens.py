"""One open, then checks on what was opened (issue 20): a FIFO never hangs cloudguard, and
a file another user can swap is never read.

A FIFO at an output or log path blocked `open` forever; every such path is
now opened O_NONBLOCK and refused by its type before any I/O. The race: the
trust check looked at the path (`lstat`) and the reader opened it again,
following whatever was there by then, so another user who could write the
directory swapped in their own file (`renameat2(RENAME_EXCHANGE)`) and had
it read as the victim's. Now the file is opened once through its directory,
the descriptor is checked, and a directory another user can rename files in
is refused. The attacker here is a real second user (uid 65534, setpriv)
swapping the files in a loop for a bounded time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from named_checks import broken
from second_uid import (
    OTHER_UID,
    as_other_user,
    python,
    require_a_second_user,
    world_readable_dir,
)

from cloudguard.project_file import UntrustedFileError, find_project_file, read_project_file

HANG = 30  # seconds: far beyond any of these commands; a hang shows as a named failure
# Where the kernel parks a process whose open(2) of a FIFO waits for the other end: a
# hang is seen the moment it starts, not when HANG runs out (the timeout stays the backstop).
FIFO_OPEN_WAIT = "wait_for_partner"


def cloudguard(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "cloudguard", *args]
    with subprocess.Popen(
        command,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "300"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        deadline = time.monotonic() + HANG
        while True:
            try:
                out, err = process.communicate(timeout=0.1)
                return subprocess.CompletedProcess(command, process.returncode, out, err)
            except subprocess.TimeoutExpired:
                if _waits_on_a_fifo(process.pid) or time.monotonic() > deadline:
                    process.kill()
                    process.communicate()
                    pytest.fail(
                        broken("a-fifo-never-hangs", f"cloudguard {' '.join(args)} hung on a FIFO")
                    )


def _waits_on_a_fifo(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/wchan").read_text() == FIFO_OPEN_WAIT
    except OSError:
        return False


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    "command",
    [
        ("audit", "--inventory", "vms.json", "--output", "{fifo}"),
        ("audit", "--inventory", "vms.json", "--report", "sarif={fifo}"),
        ("run", "--log", "{fifo}", "--", "true"),
        ("check", "--log", "{fifo}"),
        ("audit", "--inventory", "vms.json", "--config", "{fifo}"),
    ],
    ids=["output", "report", "run-log", "check-log", "config"],
)
def test_a_fifo_never_hangs_cloudguard(tmp_path: Path, fifo: Path, command: tuple[str, ...]):
    (tmp_path / "vms.json").write_text("[]")
    (tmp_path / "plan.json").write_text("{}")

    done = cloudguard(*(part.format(fifo=fifo) for part in command), cwd=tmp_path)

    assert done.returncode != 0, done.stderr
    assert "not a regular file" in done.stderr, done.stderr


def test_a_reap_log_that_is_a_fifo_is_refused_not_waited_on(fifo: Path) -> None:
    """The reap log is opened before the first item (after the plan is read and checked)."""
    opens = (
        "import sys; from pathlib import Path\n"
        "from cloudguard.documents.reap_log import ReapLog, ReapLogError\n"
        "try:\n    ReapLog(Path(sys.argv[1]))\n"
        "except ReapLogError as error:\n    sys.exit(str(error))\n"
    )
    try:
        done = subprocess.run([sys.executable, "-c", opens, str(fifo)], capture_output=True,
                              text=True, timeout=HANG, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("the reap log hung on a FIFO", pytrace=False)
    assert done.returncode != 0 and "not a regular file" in done.stderr, done.stderr


def test_a_discovered_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "cloudguard.toml")

    done = cloudguard("audit", "--inventory", "-", cwd=tmp_path)

    assert done.returncode == 97 and "not a regular file" in done.stderr, done.stderr


def test_a_directory_others_can_write_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "cloudguard.toml").write_text('[audit]\nformat = "json"\n')
    (shared / "cloudguard.toml").chmod(0o644)
    shared.chmod(0o777)  # another user can rename files here: no sticky bit

    done = cloudguard("audit", "--inventory", "-", cwd=shared)

    assert done.returncode == 97, broken(
        "a-directory-others-write-is-refused",
        f"a file in a directory others can write was read: {done}",
    )
    assert "writable by group or others without the sticky bit" in done.stderr, done.stderr
    shared.chmod(0o1777)  # sticky: only the owner may rename or remove it
    assert cloudguard("audit", "--inventory", "-", cwd=shared).returncode != 97


SWAPPER = r"""
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
RENAME_EXCHANGE = 2
AT_FDCWD = -100
here, deadline = sys.argv[1], time.monotonic() + float(sys.argv[2])
mine = os.path.join(here, "mine.toml")
with open(mine, "w") as out:
    out.write('[audit]\ntask-tag = "planted-by-the-other-user"\n')
os.chmod(mine, 0o644)
theirs = os.path.join(here, "cloudguard.toml").encode()
swaps = 0
while time.monotonic() < deadline and not os.path.exists(os.path.join(here, "stop")):
    if libc.renameat2(AT_FDCWD, theirs, AT_FDCWD, mine.encode(), RENAME_EXCHANGE) == 0:
        swaps += 1
print(swaps)
"""


def test_another_user_swapping_the_file_never_gets_it_read(tmp_path: Path) -> None:
    """Another user swaps their own file in and out for up to 5 s while the victim reads
    its file as every command does; not once is the other user's file what was read.
    Run by an ordinary user it fails naming the second user it needs (tests/second_uid.py)."""
    require_a_second_user()
    shared = world_readable_dir()
    shared.chmod(0o777)  # the group-writable project directory of the issue, for anyone
    os.chown(shared, 0, 0)
    config = shared / "cloudguard.toml"
    config.write_text('[audit]\ntask-tag = "the-victims"\n')
    config.chmod(0o644)
    swapper = subprocess.Popen(
        as_other_user(python(), "-c", SWAPPER, str(shared), "5"),
        stdout=subprocess.PIPE,
        text=True,
    )
    read, refused = 0, 0
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and swapper.poll() is None:
            try:
                found = find_project_file(shared, {})
                text = read_project_file(found, discovered=True).text if found else ""
            except UntrustedFileError:
                refused += 1
                continue
            read += 1
            assert "planted" not in text, broken(
                "a-swapped-file-is-never-read",
                f"cloudguard read the file uid {OTHER_UID} swapped in",
            )
    finally:
        (shared / "stop").touch()
        swaps = int(swapper.communicate(timeout=30)[0] or 0)
    assert swaps > 0, "the other user never swapped the files: the race was not run"
    assert read + refused > 0, "the victim never looked"

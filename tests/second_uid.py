"""Run cloudguard as a second, ordinary user, so a test means the same as root and as anyone.

The test suite may run as root (CI does). Where a permission decides the
outcome (a process's /proc files, another user's file), a test runs the
guard as uid 65534 instead: `setpriv` to that uid, an interpreter that user
can execute, and a copy of the `cloudguard` package in a directory that user
can read (the checkout may sit under a home only root can enter). The guard
half needs nothing but the standard library, so the copy is all it imports.

Nothing is skipped: a host without `setpriv` or an interpreter the second
user can run fails the test naming what is missing.

An owner check (a file of another user's is refused) needs two users: the
test makes the file, the second user's guard meets it. Only root can switch to
a second user, so such a test run by an ordinary user fails naming that,
unless the host declares it (`TESTS_HOST_LACKS=second-uid`, tests/host_lacks.py).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest
from host_lacks import require
from named_checks import broken

import cloudguard

OTHER_UID = 65534  # `nobody` on Debian; any uid that is not ours will do
SETPRIV = shutil.which("setpriv") or "setpriv"


def require_a_second_user() -> None:
    """An owner check needs a second user, and only root can switch to one."""
    missing = f"an owner check needs a second user, and only root can switch to uid {OTHER_UID}"
    require("second-uid", None if os.geteuid() == 0 else missing)


def another_users_file(where: Path, name: str, content: bytes) -> Path:
    """A file this process owns and the second user may write (0666): for that user it is
    another user's file, which only an owner check keeps it from using."""
    require_a_second_user()
    path = where / name
    path.write_bytes(content)
    path.chmod(0o666)
    return path


def refused_to_the_second_user(
    where: Path,
    imports: str,
    call: str,
    *,
    check: str,
    what: str,
    why: str | None = None,
    env: Mapping[str, str] | None = None,
) -> None:
    """As the second user, `call` (Python, with `imports`, which import the refusal it must
    raise as `Refused`) is refused, saying `why` (by default: the file is owned by this
    process's user). Not refused, it fails at `check`: `what` happened instead."""
    script = (
        f"{imports}\n"
        f"try:\n    done = {call}\n"
        "except Refused as error:\n    print('REFUSED', error)\n"
        "else:\n    print('DONE', done)\n"
    )
    result = run_guard(where, script, env={"PATH": "/usr/bin:/bin", **(env or {})})
    assert result.stdout.startswith("REFUSED"), broken(check, f"{what}: {result}")
    why = f"owned by uid {os.geteuid()}" if why is None else why
    assert why in result.stdout, result.stdout


def as_other_user(*argv: str) -> list[str]:
    """`argv` run as OTHER_UID, with no supplementary groups. As root, setpriv switches; an
    ordinary user already is another user than root, and runs `argv` as it is."""
    if os.geteuid() != 0:
        return list(argv)
    return [SETPRIV, f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups", *argv]


@functools.cache
def python() -> str:
    """An interpreter the second user can execute (this one may live under root's home)."""
    for candidate in (os.path.realpath(sys.executable), "/usr/bin/python3"):
        # Through a shell: setpriv's own exec of the program may still pass where the user's
        # next exec of it would not (a directory only root can enter).
        probe = subprocess.run(
            as_other_user("sh", "-c", f'exec "{candidate}" -c pass'),
            capture_output=True,
            check=False,
        )
        if probe.returncode == 0:
            return candidate
    raise AssertionError(
        f"no Python interpreter that uid {OTHER_UID} can run ({sys.executable}, /usr/bin/python3)"
    )


def world_readable_dir() -> Path:
    """A fresh directory under /tmp that every user can enter, and the second user can write."""
    path = Path(tempfile.mkdtemp(prefix="cloudguard-second-uid-", dir="/tmp"))
    path.chmod(0o755)
    if os.geteuid() == 0:
        os.chown(path, OTHER_UID, OTHER_UID)
    return path


@pytest.fixture
def second_user() -> Iterator[Path]:
    """A directory the second user can enter and write, holding the package copy it imports."""
    path = world_readable_dir()
    try:
        yield package_copy(path)
    finally:
        shutil.rmtree(path, ignore_errors=True)


def package_copy(where: Path) -> Path:
    """A copy of the cloudguard package under `where`, readable by everyone; the PYTHONPATH."""
    source = Path(cloudguard.__file__).parent
    shutil.copytree(source, where / "cloudguard", ignore=shutil.ignore_patterns("__pycache__"))
    for directory, _, files in os.walk(where / "cloudguard"):
        os.chmod(directory, 0o755)
        for name in files:
            os.chmod(os.path.join(directory, name), 0o644)
    return where


def run_guard(
    where: Path, script: str, *, env: Mapping[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run `script` (Python, importing the copied cloudguard) as the second user, in `where`."""
    full_env = {**env, "PYTHONPATH": str(where), "HOME": str(where)}
    return subprocess.run(
        as_other_user(python(), "-c", script),
        cwd=where,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def guard_run_script(command: Sequence[str], log: Path, *, hard: bool = False) -> str:
    """Python that runs `cloudguard run [--hard] --log LOG -- COMMAND` without the CLI (typer
    is not in the copy): the same runner the command calls, the same exit code."""
    return (
        "import sys\n"
        "from cloudguard.guard import runner\n"
        "from cloudguard.guard.seal_registry import load_registry\n"
        f"sys.exit(runner.run({list(command)!r}, registry=load_registry(), log={str(log)!r}, "
        f"hard={hard!r}))\n"
    )

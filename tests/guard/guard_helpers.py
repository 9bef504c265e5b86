"""Helpers for the guard's tests: run the real `cloudguard` command as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from cloudguard.documents import reach_log

PYTHON_DIR = str(Path(sys.executable).parent)


def cloudguard(
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 60,
    stdin: int | None = subprocess.DEVNULL,
) -> subprocess.CompletedProcess[str]:
    """`python -m cloudguard ARGS`, with the test's environment (default: this process's)."""
    return subprocess.run(
        [sys.executable, "-m", "cloudguard", *args],
        env=dict(os.environ if env is None else env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=stdin,
        check=False,
    )


def minimal_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A small, explicit environment: no operator state, a HOME of the test's own.

    PATH holds only the system directories, so no real cloud CLI installed
    beside this interpreter (awscli is, on some machines) can be found.
    """
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
    pythonpath = os.environ.get("PYTHONPATH")  # the negative controls run us from a mutant copy
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    env.update(extra)
    return env


def git(repo: Path, *args: str) -> None:
    """git in `repo`, with an author of its own (a commit needs one)."""
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
        check=True,
        capture_output=True,
    )


def child(script: str) -> list[str]:
    """A command line that runs `script` in a Python child (the sealed command)."""
    return [sys.executable, "-c", script]


def reaches(log: Path) -> tuple[Mapping[str, object], ...]:
    from cloudguard_schemas import validate_lines

    validate_lines("reach-log", log)  # every line, as written by the shims and guards
    return reach_log.read(str(log)).reaches


def seal_lines(stderr: str) -> Sequence[str]:
    return [line for line in stderr.splitlines() if line.startswith("CLOUDGUARD_AMBIENT_SEAL")]

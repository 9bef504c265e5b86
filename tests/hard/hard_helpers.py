"""Run `cloudguard run --hard` as a user would, inside a network namespace the test makes.

Every run is wrapped in an outer `unshare -rn` (loopback only): whatever the
hard seal does or fails to do, nothing a test sends can leave the machine.
The outer namespace plays the host: its loopback is "the host's loopback".
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cloudguard.documents import reach_log

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
IP_TOOL = shutil.which("ip", path=SYSTEM_PATH) or "ip"
# What a run says when the lookup it makes inside before the command got no answer of the
# sink's: it stops (75), as lookups inside would go unrecorded.
LOOKUP_UNANSWERED = "a lookup made inside did not reach the sink"


@dataclass(frozen=True)
class HardRun:
    returncode: int
    stdout: str
    stderr: str
    log: Path

    def reaches(self) -> tuple[Mapping[str, object], ...]:
        from cloudguard_schemas import validate_lines

        validate_lines("reach-log", self.log)  # the sink's records match the reach-log schema
        return reach_log.read(str(self.log)).reaches

    def targets(self, via: str) -> list[str]:
        return [str(r["target"]) for r in self.reaches() if r["via"] == via]

    @property
    def output(self) -> str:
        return f"exit {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def hard_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": SYSTEM_PATH, "HOME": str(home), "LANG": "C.UTF-8"}
    pythonpath = os.environ.get("PYTHONPATH")  # the negative controls run us from a mutant copy
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    env.update(extra)
    return env


def hard_run(
    tmp_path: Path,
    *command: str,
    options: Sequence[str] = ("--hard",),
    host_setup: str = "",
    env: Mapping[str, str] | None = None,
    timeout: float = 60,
    mounts: bool = False,
    cwd: Path | None = None,
    launcher: Sequence[str] = ("-m", "cloudguard"),
) -> HardRun:
    """`cloudguard run OPTIONS --log LOG -- COMMAND` in a fresh loopback-only namespace.

    `host_setup` is shell run first in that namespace (a server on "the host's" loopback);
    a background job it starts must set S to its pid, to be stopped after the run. With
    `mounts`, the namespace has a mount namespace of its own too: `host_setup` may then make
    the host's files look as another host's would (a tmpfs on /run, an overlay on /etc). `cwd`:
    where the run starts (its cloudguard.toml is the project's).
    """
    log = tmp_path / f"reach-{len(list(tmp_path.glob('reach-*')))}.jsonl"
    stop = '[ -z "$S" ] || kill $S'
    outer = f'{IP_TOOL} link set lo up && {host_setup} "$@"; code=$?; {stop}; exit $code'
    argv = [
        *("unshare", "-rnm" if mounts else "-rn", "sh", "-c", outer, "sh"),
        *(sys.executable, *launcher, "run", *options, "--log", str(log), "--"),
        *command,
    ]
    result = subprocess.run(
        argv,
        env=dict(env or hard_env(tmp_path)),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        check=False,
    )
    return HardRun(result.returncode, result.stdout, result.stderr, log)


def python_child(*flags: str, code: str) -> list[str]:
    return [sys.executable, *flags, "-c", code]


def connect(host: str, port: int, family: str = "") -> str:
    """Python source that tries one TCP connection and swallows the error (exit 0)."""
    if family == "6":
        return (
            "import socket\ns = socket.socket(socket.AF_INET6)\ns.settimeout(5)\n"
            f"try:\n    s.connect(({host!r}, {port}))\n"
            "except OSError as e:\n    print('refused', e)\n"
        )
    return (
        "import socket\n"
        f"try:\n    socket.create_connection(({host!r}, {port}), timeout=5)\n"
        "except OSError as e:\n    print('refused', e)\n"
    )


def without_the_gate(tmp_path: Path) -> tuple[str, ...]:
    """A `hard_run` launcher for a host whose kernel offers no seccomp user notification: the
    kernel's list of seccomp actions is read from a copy that lacks `user_notif` (a bind over
    the file in /proc would make the seal's own /proc unmountable)."""
    facts = tmp_path / "actions_avail"
    facts.write_text("kill_process kill_thread trap errno trace log allow\n")
    return (
        "-c",
        "import runpy, sys; from cloudguard.guard.hard import requirements; "
        "requirements.SECCOMP_ACTIONS = sys.argv.pop(1); "
        "runpy.run_module('cloudguard', run_name='__main__')",
        str(facts),
    )

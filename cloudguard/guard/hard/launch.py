"""The host side of `cloudguard run --hard`: start the supervisor, relay forwards, judge its status.

The supervisor reports on a pipe only this process and it hold (the
command inside cannot forge it). Its verdicts, failing closed:

- no `started`: the namespaces could not be made -> 75, naming the cause;
- `started` but no end: the sink stopped before the command did (killed,
  crashed) -> 97, records may be missing;
- an end with `lost`: a record could not be written -> 97;
- otherwise the command's own exit code (the reach log check follows).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from cloudguard import exit_codes, private_files
from cloudguard.guard.hard import forward, masks, protocol, requirements, running

SUPERVISOR = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from cloudguard.guard.hard.supervisor import main; sys.exit(main(sys.argv[2:]))"
)
Spawn = Callable[..., int]


class HardSealError(Exception):
    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def check_requirements(path: str | None = None) -> None:
    problem = requirements.missing(path)
    if problem:
        raise HardSealError(f"the hard seal cannot be made here: {problem}", exit_codes.DID_NOT_RUN)


def seal_line_suffix(ports: Sequence[int]) -> str:
    return " hard=on" + (f" forward={forward.describe(ports)}" if ports else "")


def run_inside(
    command: Sequence[str],
    env: dict[str, str],
    *,
    seal_root: Path,
    log: str,
    masked_homes: Sequence[str],
    ports: Sequence[int],
    spawn: Spawn,
) -> int:
    """Run `command` inside the hard seal; its exit code, or HardSealError (75 / 97)."""
    check_requirements(env.get("PATH"))
    ip_tool = shutil.which("ip", path=env.get("PATH")) or "ip"
    private_files.write_private(seal_root / "empty", b"")
    os.mkdir(running.running_dir(str(seal_root)), 0o700)  # where pytest names its running test
    status_read, status_write = os.pipe()
    spec: list[tuple[str, object]] = [
        ("seal", seal_root),
        ("log", os.path.abspath(log)),
        ("uid", os.getuid()),
        ("gid", os.getgid()),
        ("ip", ip_tool),
        ("status_fd", status_write),
        *(("mask", home) for home in masks.expand(masked_homes, os.path.expanduser("~"))),
        *(("forward", port) for port in ports),
    ]
    spec_path = seal_root / "hard.spec"
    try:
        private_files.write_private(spec_path, protocol.encode(spec))
    except ValueError as error:
        os.close(status_read)
        os.close(status_write)
        raise HardSealError(str(error), exit_codes.DID_NOT_RUN) from None
    package_parent = str(Path(__file__).resolve().parents[3])
    argv = [sys.executable, "-I", "-S", "-c", SUPERVISOR, package_parent, str(spec_path), "--"]
    relays = forward.HostForwarders(seal_root, ports)
    try:
        code = spawn([*argv, *command], env, sys.stderr, pass_fds=(status_write,))
    finally:
        relays.close()
        os.close(status_write)
    with os.fdopen(status_read, "rb") as handle:
        status = protocol.decode(handle.read().decode("utf-8", "replace"))
    return _verdict(status, code)


def _verdict(merged: dict[str, str | list[str]], code: int) -> int:
    if "setup_error" in merged:
        raise HardSealError(
            f"the hard seal cannot be made here: {merged['setup_error']}", exit_codes.DID_NOT_RUN
        )
    if "started" not in merged:
        raise HardSealError(
            f"the hard seal supervisor exited {code} before the namespaces were made",
            exit_codes.DID_NOT_RUN,
        )
    if "code" not in merged:
        raise HardSealError(
            f"the sink stopped before the command ended (exit {code}): reaches after that "
            "may be unrecorded, failing closed",
            exit_codes.REFUSED_ADMISSION,
        )
    if merged.get("lost"):
        raise HardSealError(
            f"the sink could not record a reach: {merged['lost']}: failing closed",
            exit_codes.REFUSED_ADMISSION,
        )
    return int(str(merged["code"]))

"""The host side of `cloudguard run --hard`: start the supervisor, relay forwards, judge its status.

The supervisor reports on a pipe only this process and it hold (the
command inside cannot forge it), and relays every record made inside on a
second one to this process's record keeper (`RecordsFromInside`). Its
verdicts, failing closed:

- no `started`: the namespaces could not be made -> 75, naming the cause;
- `started` but no end: the sink stopped before the command did (killed,
  crashed) -> 97, records may be missing;
- an end with `lost`: a record could not be relayed -> 97;
- an end whose count of relayed records is not the count this process
  received -> 97;
- otherwise the command's own exit code (the keeper's verdict follows).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from cloudguard import exit_codes, private_files
from cloudguard.guard import reach
from cloudguard.guard.hard import forward, masks, protocol, requirements, running
from cloudguard.guard.keeper import Keeper

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


class RecordsFromInside(threading.Thread):
    """Reads the records pipe: each line a record for the keeper (and for the keepers of the
    runs this one is inside), or a tampering the supervisor saw."""

    def __init__(self, fd: int, answers: int, keeper: Keeper, upstream: Sequence[str]) -> None:
        super().__init__(name="cloudguard-records-from-inside", daemon=True)
        self.fd = fd
        self.answers = answers  # one byte per line, once the keeper holds it
        self.keeper = keeper
        self.upstream = upstream
        self.count = 0

    def run(self) -> None:
        try:
            with os.fdopen(self.fd, "rb") as lines:
                for line in lines:
                    self._take(line)
                    os.write(self.answers, b"k")
        except Exception as error:  # a reader that stopped: the supervisor hears an end, fails
            self.keeper.tamper(f"the records from the hard seal could not be read ({error!r})")
        finally:
            os.close(self.answers)

    def _take(self, line: bytes) -> None:
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        kind = record.get("kind") if isinstance(record, dict) else None
        if not isinstance(record, dict) or kind not in ("reach", "tampering"):
            self.keeper.tamper("a malformed line arrived from the hard seal's relay")
        elif kind == "tampering":
            self.keeper.tamper(f"inside the hard seal: {record.get('what')}")
        else:
            self.keeper.keep(record)
            self.count += 1
            for address in self.upstream:
                reach.deliver(address, record)


def run_inside(
    command: Sequence[str],
    env: dict[str, str],
    *,
    seal_root: Path,
    keeper: Keeper,
    keepers: Sequence[str],
    masked_homes: Sequence[str],
    ports: Sequence[int],
    spawn: Spawn,
) -> int:
    """Run `command` inside the hard seal; its exit code, or HardSealError (75 / 97).

    `keepers`: the addresses the refusers inside deliver to (the supervisor serves them
    all, relaying to `keeper`, which passes on to the others: outer runs').
    """
    check_requirements(env.get("PATH"))
    ip_tool = shutil.which("ip", path=env.get("PATH")) or "ip"
    private_files.write_private(seal_root / "empty", b"")
    os.mkdir(running.running_dir(str(seal_root)), 0o700)  # where pytest names its running test
    status_read, status_write = os.pipe()
    records_read, records_write = os.pipe()
    answers_read, answers_write = os.pipe()
    spec: list[tuple[str, object]] = [
        ("seal", seal_root),
        ("uid", os.getuid()),
        ("gid", os.getgid()),
        ("ip", ip_tool),
        ("status_fd", status_write),
        ("records_fd", records_write),
        ("answers_fd", answers_read),
        *(("mask", home) for home in masks.expand(masked_homes, os.path.expanduser("~"))),
        *(("forward", port) for port in ports),
        *(("keeper", address.removeprefix("@")) for address in keepers),
    ]
    spec_path = seal_root / "hard.spec"
    try:
        private_files.write_private(spec_path, protocol.encode(spec))
    except ValueError as error:
        for fd in (status_read, status_write, records_read, records_write):
            os.close(fd)
        for fd in (answers_read, answers_write):
            os.close(fd)
        raise HardSealError(str(error), exit_codes.DID_NOT_RUN) from None
    package_parent = str(Path(__file__).resolve().parents[3])
    argv = [sys.executable, "-I", "-S", "-c", SUPERVISOR, package_parent, str(spec_path), "--"]
    relays = forward.HostForwarders(seal_root, ports)
    upstream = [a for a in keepers if a != keeper.address]
    inside = RecordsFromInside(records_read, answers_write, keeper, upstream)
    inside.start()
    try:
        fds = (status_write, records_write, answers_read)
        code = spawn([*argv, *command], env, sys.stderr, pass_fds=fds)
    finally:
        relays.close()
        for fd in (status_write, records_write, answers_read):
            os.close(fd)  # the supervisor's copies were the last: the reader sees the end
    inside.join()
    with os.fdopen(status_read, "rb") as handle:
        status = protocol.decode(handle.read().decode("utf-8", "replace"))
    return _verdict(status, code, received=inside.count)


def _verdict(merged: dict[str, str | list[str]], code: int, *, received: int) -> int:
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
    if str(merged.get("recorded")) != str(received):
        raise HardSealError(
            f"the hard seal relayed {merged.get('recorded')} record(s) but the run received "
            f"{received}: failing closed",
            exit_codes.REFUSED_ADMISSION,
        )
    return int(str(merged["code"]))

"""The host side of `cloudguard run --hard`: fork the supervisor, relay, judge its status.

`HardSeal.fork` forks the supervisor at the very start of the run, before the
log is armed and before any thread starts (a process with threads may not
enter a user namespace, and a fork is all a supervisor needs: no interpreter
to start, nothing to import). While the host arms its log and writes its
shims, the supervisor makes the namespaces; `HardSeal.run` then sends it the
job (the seal, the keepers, the command and its environment) and waits.

The supervisor reports on a pipe only this process and it hold (the command
inside cannot forge it), and relays every record made inside on a second
one to this process's record keeper (`RecordsFromInside`). Its verdicts,
failing closed:

- no `started`: the namespaces could not be made -> 75, naming the cause;
- `started` but no end: the sink stopped before the command did (killed,
  crashed) -> 97, records may be missing;
- an end with `lost`: a record could not be relayed -> 97;
- an end with `dropped`: the kernel dropped packets before the sink could
  record them -> 97, naming how many and where;
- an end whose count of relayed records is not the count this process
  received -> 97;
- otherwise the command's own exit code (the keeper's verdict follows).
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import socket
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from cloudguard import exit_codes
from cloudguard.guard import reach
from cloudguard.guard.hard import forward, masks, protocol, requirements, running
from cloudguard.guard.keeper import Keeper

Wait = Callable[[int], int]  # a child's pid -> its exit code (signals forwarded meanwhile)


class HardSealError(Exception):
    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def check_requirements() -> None:
    problem = requirements.missing()
    if problem:
        raise HardSealError(f"the hard seal cannot be made here: {problem}", exit_codes.DID_NOT_RUN)


def allowed_sockets(paths: Sequence[str]) -> dict[str, tuple[int, int, int]]:
    """--allow-unix: each path's socket as it is now (its real path -> device and inode)."""
    found: dict[str, tuple[int, int, int]] = {}
    for path in paths:
        real = os.path.realpath(path)
        try:
            status = os.stat(real)
        except OSError as error:
            raise HardSealError(
                f"--allow-unix {path}: {error.strerror}", exit_codes.USAGE
            ) from None
        if not stat.S_ISSOCK(status.st_mode):
            raise HardSealError(f"--allow-unix {path}: not a unix socket", exit_codes.USAGE)
        found[real] = (os.major(status.st_dev), os.minor(status.st_dev), status.st_ino)
    return found


class RecordsFromInside(threading.Thread):
    """Reads the records pipe: each line a record for the keeper (and for the keepers of the
    runs this one is inside), or a tampering the supervisor saw. Every line is answered with
    one byte once the keeper holds it; a batch's answers go back in one write."""

    def __init__(self, fd: int, answers: int, keeper: Keeper, upstream: Sequence[str]) -> None:
        super().__init__(name="cloudguard-records-from-inside", daemon=True)
        self.fd = fd
        self.answers = answers
        self.keeper = keeper
        self.upstream = upstream
        self.count = 0

    def run(self) -> None:
        pending = b""
        try:
            while chunk := os.read(self.fd, 1 << 20):
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    self._take(line)
                if lines:
                    os.write(self.answers, b"k" * len(lines))
        except Exception as error:  # a reader that stopped: the supervisor hears an end, fails
            self.keeper.tamper(f"the records from the hard seal could not be read ({error!r})")
        finally:
            os.close(self.fd)
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


class HardSeal:
    """One run's supervisor, seen from the host."""

    def __init__(
        self,
        pid: int,
        host_ends: dict[str, int],
        forward_channel: socket.socket,
        ports: Sequence[int],
        allow_unix: Sequence[str],
        limit: str | None,
        sources_dir: str,
    ) -> None:
        self.pid = pid
        self.ends = host_ends  # status, records, answers, job
        self.forward_channel = forward_channel
        self.ports = tuple(ports)
        self.allow_unix = tuple(allow_unix)
        self.limit = limit  # why the gate cannot run here (a declared limit), or None
        self.sources_dir = sources_dir
        self._waited = False

    @classmethod
    def fork(
        cls,
        *,
        masked_homes: Sequence[str],
        ports: Sequence[int],
        allow_unix: Sequence[str] = (),
        environ: Mapping[str, str] = os.environ,
        roots: Sequence[tuple[str, str]] = (),
        outputs: Sequence[str] = (),
        sealed: Callable[[str], bool] = lambda name: False,
    ) -> HardSeal:
        """Fork the supervisor, which starts making the seal at once (HardSealError: 2 for an
        --allow-unix that names no socket). `roots`: the ambient roots (path, as declared),
        read-only inside, each write there refused and recorded by the gate; `outputs`: the
        declared outputs among them, writable; `sealed`: whether the seal drops a variable
        (what a dropped variable names is masked too)."""
        from cloudguard.guard.hard import seccomp_filter, supervisor

        allowed = allowed_sockets(allow_unix)
        limit = requirements.gate_missing()
        cwd = os.getcwd()
        temp_dir = tempfile.gettempdir()
        setup = supervisor.Setup(
            uid=os.getuid(),
            gid=os.getgid(),
            cwd=cwd,
            temp_dir=temp_dir,
            sources_dir=tempfile.mkdtemp(prefix="cloudguard-hard-"),
            entries=masks.plan(
                credential_homes=masked_homes,
                environ=environ,
                uid=os.getuid(),
                cwd=cwd,
                temp_dir=temp_dir,
                ambient_roots=[path for path, _ in roots],
                outputs=outputs,
                sealed=sealed,
                installation=masks.installation(),
            ),
            allow_unix=allowed,
            ports=ports,
            gate=None if limit else seccomp_filter.native(write_calls=bool(roots)),
            roots=roots,
            outputs=outputs,
        )
        status_read, status_write = os.pipe()
        records_read, records_write = os.pipe()
        answers_read, answers_write = os.pipe()
        job_read, job_write = os.pipe()
        host_channel, inside_channel = forward.channel()
        sys.stdout.flush()
        sys.stderr.flush()
        # The two processes share their pages until either writes one. A garbage collection
        # would touch every object's header (a copy of nearly every page, both sides): what
        # exists now is frozen out of it (measured: ~10 % of the hard run's CPU time).
        gc.freeze()
        pid = os.fork()
        if pid == 0:  # the supervisor: never returns
            for fd in (status_read, records_read, answers_write, job_write):
                os.close(fd)
            host_channel.close()
            pipes = supervisor.Pipes(
                status_write, records_write, answers_read, job_read, inside_channel
            )
            supervisor.run_forked(setup, pipes)
        for fd in (status_write, records_write, answers_read, job_read):
            os.close(fd)
        inside_channel.close()
        ends = {
            "status": status_read,
            "records": records_read,
            "answers": answers_write,
            "job": job_write,
        }
        return cls(pid, ends, host_channel, ports, list(allowed), limit, setup.sources_dir)

    def line_suffix(self) -> str:
        """What the seal line adds: hard=on, and every way through or limit there is."""
        suffix = " hard=on"
        if self.ports:
            suffix += f" forward={forward.describe(self.ports)}"
        if self.allow_unix:
            suffix += f" allow-unix={','.join(self.allow_unix)}"
        if self.limit:
            suffix += f" limits={requirements.GATE_LIMITS}"
        return suffix

    def limit_line(self) -> str:
        """The declared limit, explained (empty when there is none)."""
        if not self.limit:
            return ""
        return (
            f"cloudguard: --hard: declared limit: {self.limit}: a connect to a host unix socket "
            "the seal does not mask is neither refused nor recorded, nor is a socket of a "
            "family the network namespace does not isolate (AF_VSOCK)\n"
        )

    def run(
        self,
        command: Sequence[str],
        env: Mapping[str, str],
        *,
        seal_root: Path,
        keeper: Keeper,
        keepers: Sequence[str],
        wait: Wait,
    ) -> int:
        """Run `command` inside; its exit code, or HardSealError (75 / 97).

        `keepers`: the addresses the refusers inside deliver to (the supervisor serves them
        all, relaying to `keeper`, which passes on to the others: outer runs').
        """
        from cloudguard.guard.hard.supervisor import Job

        os.mkdir(running.running_dir(str(seal_root)), 0o700)  # where pytest names its test
        upstream = [a for a in keepers if a != keeper.address]
        inside = RecordsFromInside(
            self.ends.pop("records"), self.ends.pop("answers"), keeper, upstream
        )
        inside.start()
        relays = forward.HostForwarders(self.forward_channel, self.ports) if self.ports else None
        job = Job(str(seal_root), list(keepers), command, env)
        try:
            with os.fdopen(self.ends.pop("job"), "wb") as pipe:
                pipe.write(job.encode())
        except BrokenPipeError:
            pass  # the supervisor ended already: its status says why
        code = wait(self.pid)
        self._waited = True
        inside.join()
        if relays is not None:
            relays.close()
        return _verdict(self._status(), code, received=inside.count)

    def _status(self) -> dict[str, str]:
        with os.fdopen(self.ends.pop("status"), "rb") as handle:
            return protocol.decode(handle.read().decode("utf-8", "replace"))

    def close(self) -> None:
        """Whatever happened: the supervisor ended and waited for, every end closed. A
        supervisor never given its job reads an end and runs nothing."""
        for fd in self.ends.values():
            os.close(fd)
        self.ends.clear()
        self.forward_channel.close()
        if not self._waited:
            os.waitpid(self.pid, 0)
            self._waited = True
        shutil.rmtree(self.sources_dir, ignore_errors=True)


def _verdict(merged: Mapping[str, str], code: int, *, received: int) -> int:
    if "setup_error" in merged:
        raise HardSealError(
            f"the hard seal cannot be made here: {merged['setup_error']}", exit_codes.DID_NOT_RUN
        )
    failure = f": {merged['failure']}" if "failure" in merged else ""
    if "started" not in merged:
        raise HardSealError(
            f"the hard seal supervisor exited {code} before the namespaces were made{failure}",
            exit_codes.DID_NOT_RUN,
        )
    if "code" not in merged:
        raise HardSealError(
            f"the sink stopped before the command ended (exit {code}){failure}: reaches after "
            "that may be unrecorded, failing closed",
            exit_codes.REFUSED_ADMISSION,
        )
    if merged.get("lost"):
        raise HardSealError(
            f"the sink could not record a reach: {merged['lost']}: failing closed",
            exit_codes.REFUSED_ADMISSION,
        )
    if merged.get("dropped"):
        raise HardSealError(
            f"the hard seal dropped {merged['dropped']} packet(s) before the sink could record "
            f"them ({merged.get('dropped_where')}): reaches among them are unrecorded, failing "
            "closed",
            exit_codes.REFUSED_ADMISSION,
        )
    if str(merged.get("recorded")) != str(received):
        raise HardSealError(
            f"the hard seal relayed {merged.get('recorded')} record(s) but the run received "
            f"{received}: failing closed",
            exit_codes.REFUSED_ADMISSION,
        )
    return int(str(merged["code"]))

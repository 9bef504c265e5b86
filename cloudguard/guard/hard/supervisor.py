"""Runs inside the hard seal: makes the namespaces, starts the command, serves the sink.

`cloudguard run --hard` forks the supervisor first, before it arms its log or
starts a thread (`launch.HardSeal.fork`): the seal is made while the host
makes its own (the shims, the keeper), and the supervisor starts no
interpreter of its own. In order (any failure before the command starts is a
setup error: the host exits 75 naming it, and the command never runs):

1. new user (root mapped to the invoking user), network and mount namespaces;
   `cg0` the default route for IPv4 and IPv6, loopback up (`namespaces`);
2. the resolver: listeners on every address a lookup may go to, the seal's
   resolv.conf where this host's layout makes the C library read it
   (`resolver`);
3. the masks: the homes as layers thrown away after the run, credential
   homes and what sealed variables and their links name, the host's daemon
   and resolver sockets, the repository's git metadata, the installation and
   the CI runner's files, the ambient roots read-only (`masks`); a working
   directory beneath a mask stops the run here; then every other mount
   read-only, what the run may write kept writable;
4. the probe: a name looked up as the command would; the run stops here,
   naming the layout, if the lookup does not reach the sink;
5. the command's init: pid 1 of a new pid namespace with its own /proc, its
   seccomp filter handed to the gate (`command_init`, `gate`); the
   supervisor non-dumpable first (nothing inside may trace it, read its
   memory or descriptors, or write its /proc files);
6. the job from the host (the seal, the keepers, the command and its
   environment): the run's record keeper names bound in this network
   namespace, relayed to the host over the records pipe (`relay`), and
   their addresses told on one fixed name (`channel.SEAL_KEEPERS`) to a
   nested `cloudguard run` that no longer knows them;
7. `started`, then the command, then the sink until the init exits.

Progress goes to a status pipe only the host holds (`protocol`).
"""

from __future__ import annotations

import contextlib
import marshal
import os
import signal
import socket
import sys
import time
from collections.abc import Mapping, Sequence

from cloudguard import exit_codes
from cloudguard.guard.channel import Channel
from cloudguard.guard.hard import (
    attribution,
    command_init,
    dns,
    forward,
    linux,
    masks,
    namespaces,
    protocol,
    resolver,
    seccomp_filter,
)
from cloudguard.guard.hard.namespaces import SetupError
from cloudguard.guard.hard.relay import Relay
from cloudguard.guard.hard.sink import Sink

FORWARDED_SIGNALS = command_init.FORWARDED_SIGNALS
PROBE_TIMEOUT = 3.0  # seconds for the probe's lookup to reach the sink
PROBE_DOMAIN = "cloudguard-probe.invalid"  # RFC 6761: never a real name


class Setup:
    """What the host decided before it forked the supervisor (plain data)."""

    def __init__(
        self,
        *,
        uid: int,
        gid: int,
        cwd: str,
        temp_dir: str,
        sources_dir: str,
        entries: Sequence[masks.Entry],
        allow_unix: Mapping[str, tuple[int, int, int]],
        ports: Sequence[int],
        gate: seccomp_filter.Arch | None,
        roots: Sequence[tuple[str, str]] = (),
        outputs: Sequence[str] = (),
    ) -> None:
        self.uid, self.gid, self.cwd = uid, gid, cwd
        self.temp_dir, self.sources_dir = temp_dir, sources_dir
        self.entries, self.allow_unix, self.ports, self.gate = entries, allow_unix, ports, gate
        # The ambient roots (path, as declared) whose writes the gate records, and the outputs
        # inside them it lets through (cloudguard.guard.hard.writes).
        self.roots, self.outputs = roots, outputs


class Pipes:
    """The supervisor's ends of what it shares with the host (descriptors)."""

    def __init__(
        self, status: int, records: int, answers: int, job: int, forwards: socket.socket
    ) -> None:
        self.status, self.records, self.answers, self.job = status, records, answers, job
        self.forwards = forwards

    def descriptors(self) -> tuple[int, ...]:
        return (self.status, self.records, self.answers, self.job, self.forwards.fileno())


def _keeper_sockets(keepers: Sequence[str]) -> frozenset[tuple[int, int, int]]:
    """The run's keepers' path sockets, as the gate knows a socket: a refuser inside that
    cannot reach the names served here delivers to the host's keeper directly."""
    found = set()
    for path in keepers:
        try:
            status = os.stat(path) if path.startswith("/") else None
        except OSError:
            continue  # not visible inside: the names served here are the way
        if status is not None:
            found.add((os.major(status.st_dev), os.minor(status.st_dev), status.st_ino))
    return frozenset(found)


def _status(fd: int, **fields: object) -> None:
    os.write(fd, protocol.encode(fields.items()).encode("utf-8", "backslashreplace"))


def run_forked(setup: Setup, pipes: Pipes) -> None:
    """The forked child's whole life; never returns."""
    keep = sorted((0, 1, 2, *pipes.descriptors()))
    for low, high in zip(keep, [*keep[1:], command_init.MAX_DESCRIPTOR], strict=True):
        os.closerange(low + 1, high)  # nothing of the host's stays open here
    code = exit_codes.DID_NOT_RUN
    try:
        code = main(setup, pipes)
    except BaseException as error:  # a supervisor that failed: the host names it, never 0
        with contextlib.suppress(BaseException):  # the host is gone: nobody to tell
            _status(pipes.status, failure=f"the supervisor failed: {error!r}")
    finally:
        os._exit(code)  # never back into the host's code this process was forked from


def main(setup: Setup, pipes: Pipes) -> int:
    linux.set_name("cg-supervisor")
    # The sink, the gate and its workers answer callers that wait, and share one interpreter
    # lock: a thread that has an answer ready gets the lock within 0.5 ms, not the default
    # 5 ms (16 processes refused at once: p50 6.0 -> 5.4 ms, p99 10.4 -> 9.4 ms, CPU +6%).
    sys.setswitchinterval(0.0005)
    relay = Relay(pipes.records, pipes.answers)
    flows = attribution.Flows()
    try:
        sink, started, layout = _make_seal(setup, pipes, relay, flows)
        job = Job.read(pipes.job)
        if job is None:  # the host gave up before it had a job for us: nothing runs
            started.cancel()
            return exit_codes.DID_NOT_RUN
        # The run's keepers, served here where the refusers inside can reach them; a keeper's
        # path (for a refuser in a network namespace of the command's own) is the host's. Their
        # addresses are told on SEAL_KEEPERS too: a `cloudguard run` nested inside whose
        # environment dropped them delivers to them all the same (rendezvous.around_seal).
        channel = Channel(
            [k.removeprefix("@").rpartition("/")[2] for k in job.keepers],
            relay.receive,
            relay.tamper,
            told=" ".join(job.keepers).encode("utf-8", "surrogateescape"),
        )
    except (SetupError, masks.MaskError) as error:
        _status(pipes.status, setup_error=str(error))
        return exit_codes.DID_NOT_RUN
    except OSError as error:
        _status(
            pipes.status, setup_error=f"{error.strerror or error} ({error.filename or 'setup'})"
        )
        return exit_codes.DID_NOT_RUN
    sink.seal_root = job.seal
    gate = None
    if started.listener is not None and setup.gate is not None:
        from cloudguard.guard.hard.gate import Gate
        from cloudguard.guard.hard.writes import Writes

        watched = Writes(setup.roots, setup.outputs, relay=relay, seal_root=job.seal)
        gate = Gate(
            started.listener,
            setup.gate,
            relay=relay,
            flows=flows,
            allowed=frozenset(setup.allow_unix.values()) | _keeper_sockets(job.keepers),
            seal_root=job.seal,
            writes=watched if setup.gate.writes else None,
        )
        gate.start()
    channel.start()  # threads only now: the init was forked from a single-threaded process
    _status(pipes.status, started=layout.describe())
    started.go(job.command, dict(job.env))
    child = started.spawner

    def forward_signal(signum: int, _frame: object) -> None:
        os.kill(child, signum)

    for sig in FORWARDED_SIGNALS:  # SIGINT too: the command is in a session of its own
        signal.signal(sig, forward_signal)
    sink.serve(until=os.pidfd_open(child))
    _, wait_status = os.waitpid(child, 0)
    if gate is not None:
        gate.close()
    channel.close()  # what the command's refusers delivered before it ended is taken
    code = command_init.exit_code(wait_status)
    end: dict[str, object] = {"code": code, "recorded": relay.count}
    if relay.lost:
        end["lost"] = relay.lost
    dropped = sink.dropped()
    if dropped:
        end["dropped"] = sum(dropped.values())
        end["dropped_where"] = "; ".join(f"{where}: {count}" for where, count in dropped.items())
    _status(pipes.status, **end)
    return code


def _make_seal(
    setup: Setup, pipes: Pipes, relay: Relay, flows: attribution.Flows
) -> tuple[Sink, command_init.Started, resolver.Layout]:
    layout = resolver.read_layout()  # before any mount: what the host's C library reads
    holes = {path: path for path in setup.allow_unix}  # each shown inside whatever masks it
    namespaces.enter(setup.uid, setup.gid)
    sources = masks.Sources(setup.sources_dir, resolver.CONF)
    if layout.target:
        holes[layout.target] = sources.resolv_conf
    tun = namespaces.make_tun()
    listeners = resolver.Listeners(ipv6=namespaces.ipv6_enabled())
    applied = masks.apply(setup.entries, sources.empty, holes, sources.layers)
    sources.detach()
    masks.check_working_directory(setup.cwd, applied, setup.temp_dir)
    masks.freeze_the_rest(applied, setup.cwd, setup.temp_dir)
    os.chdir(setup.cwd)  # re-entered: through the read-only binds made over it, if any
    forwards = {forward.inside_listener(port): port for port in setup.ports}
    sink = Sink(
        tun=tun,
        listeners=listeners,
        relay=relay,
        flows=flows,
        forwards=forwards,
        forward_channel=pipes.forwards,
    )
    probe = Probe(sink)  # its lookup waits in the resolver's queue while the init starts
    try:
        linux.become_subreaper()  # orphans stay our descendants: attribution searches only those
        linux.set_dumpable(False)  # after the id maps: nothing inside may trace or starve us
        started = command_init.start(
            setup.uid, setup.gid, keep_out=pipes.descriptors(), gate=setup.gate
        )
    except BaseException:
        probe.stop()
        raise
    try:
        probe.finish(layout)
    except SetupError:
        started.cancel()
        raise
    return sink, started, layout


class Probe:
    """A random name looked up as the command would (the C library, this host's nsswitch and
    the seal's mounts), which the sink must answer.

    The probe's own lookup is never a record: the name is random, under a domain that
    cannot exist, known only to this process (the command is not running yet and is never
    told it), and the sink answers it without recording it (`Sink.probe_name`).
    """

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.name = f"{os.urandom(8).hex()}.{PROBE_DOMAIN}"
        sink.probe_name = self.name
        self.child = os.fork()
        if self.child == 0:
            try:
                found = {str(info[4][0]) for info in socket.getaddrinfo(self.name, None)}
            except OSError:
                found = set()
            os._exit(0 if any(dns.is_synthetic(address) for address in found) else 1)

    def finish(self, layout: resolver.Layout) -> None:
        """Serve the sink until the probe is done; SetupError naming `layout` if it was not
        answered by the sink."""
        pidfd = os.pidfd_open(self.child)
        try:
            answered = self.sink.serve(until=pidfd, deadline=time.monotonic() + PROBE_TIMEOUT)
        finally:
            os.close(pidfd)
        if not answered:
            os.kill(self.child, signal.SIGKILL)
        _, status = os.waitpid(self.child, 0)
        if not answered or os.waitstatus_to_exitcode(status) != 0:
            raise SetupError(
                "a lookup made inside did not reach the sink, so lookups would go unrecorded "
                f"under this host's resolver layout ({layout.describe()})"
            )

    def stop(self) -> None:
        os.kill(self.child, signal.SIGKILL)
        os.waitpid(self.child, 0)


class Job:
    """What the host sends once its own seal is made: where, to whom, what to run."""

    def __init__(
        self, seal: str, keepers: Sequence[str], command: Sequence[str], env: Mapping[str, str]
    ) -> None:
        self.seal, self.keepers, self.command, self.env = seal, list(keepers), list(command), env

    def encode(self) -> bytes:
        return marshal.dumps((self.seal, self.keepers, self.command, dict(self.env)))

    @classmethod
    def read(cls, fd: int) -> Job | None:
        """The job, or None when the host closed the pipe without one."""
        with os.fdopen(fd, "rb") as pipe:
            data = pipe.read()
        return cls(*marshal.loads(data)) if data else None

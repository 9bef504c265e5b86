"""The command's side of the hard seal: a pid namespace of its own, its init, its filter.

The supervisor forks a *spawner*, which enters a new pid namespace and forks
the command's *init* (pid 1 there). A process that entered a new pid
namespace may start no thread (and every later fork of it lands in that
namespace): the spawner does that, single-threaded, so the supervisor keeps
its threads (the record channel, the gate). The spawner exits with the
init's status.

The init mounts a /proc of its namespace, installs the seccomp filter
(`seccomp_filter`), says `ready` with the filter's listener descriptor, and
waits; the supervisor takes a copy of that descriptor for its gate (`gate`)
with pidfd_getfd (the init cannot send it: its own sendmsg would wait for
the gate). `Started.go` then sends it the command and its
environment; it forks the command in a further user namespace mapped back
to the invoking user (not root over the mounts or the network, so it can
neither unmount a mask nor reroute around the sink) and a new session with
no controlling terminal (nothing it does reaches the operator's terminal's
input, TIOCSTI; the seccomp filter refuses that ioctl too), reaps every orphan,
passes on the signals the supervisor forwards and exits with the command's
status. The kernel delivers a signal to a namespace's init only when it has
a handler, so the command can neither kill nor stop it; when it exits, the
kernel kills whatever is left in the namespace.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import signal
import sys
from collections.abc import Mapping, Sequence

from cloudguard import exit_codes
from cloudguard.guard.hard import linux, seccomp_filter
from cloudguard.guard.hard.namespaces import SetupError

# SIGINT too: the command has a session of its own, so the terminal's Ctrl-C reaches only
# the run's processes outside it (the supervisor among them), which pass it on.
FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGINT)
MAX_DESCRIPTOR = 1 << 20


class Started:
    """The spawner (its pid), the gate's listener (None without a gate), and `go`."""

    def __init__(self, spawner: int, go: int, listener: int | None) -> None:
        self.spawner = spawner
        self.listener = listener
        self._go = go

    def go(self, command: Sequence[str], env: Mapping[str, str]) -> None:
        """Start the command: only after the host was told `started` (a supervisor that dies
        before this leaves a run in which nothing ran, 75; after it, one that did, 97)."""
        with os.fdopen(self._go, "wb") as go:
            go.write(marshal.dumps((list(command), dict(env))))

    def cancel(self) -> None:
        os.close(self._go)  # the init reads an end without a command: nothing runs


def start(uid: int, gid: int, keep_out: Sequence[int], gate: seccomp_filter.Arch | None) -> Started:
    """Fork the spawner; once the init has its /proc (and, with `gate`, its filter), the
    Started, or SetupError naming why it could not be made. `keep_out`: closed there.

    The spawner and the init each write one line on the `ready` pipe (each line is one
    atomic write): the init's pid, and `ready [LISTENER]` or why it could not start."""
    ready_read, ready_write = os.pipe()
    go_read, go_write = os.pipe()
    spawner = os.fork()
    if spawner == 0:
        # A process group of its own: a signal the terminal sends the run (Ctrl-C) reaches
        # the command once, passed on by the supervisor, never also straight to its init.
        os.setpgid(0, 0)
        for fd in (ready_read, go_write, *keep_out):
            os.close(fd)
        try:
            os._exit(_spawn_init(uid, gid, ready_write, go_read, gate))
        except BaseException as error:  # never return into the supervisor's loop
            _say(ready_write, f"cannot start the command's init: {error}")
            os._exit(exit_codes.DID_NOT_RUN)
    os.close(ready_write)
    os.close(go_read)
    with os.fdopen(ready_read, "rb") as ready:
        lines = ready.read().decode("utf-8", "replace").splitlines()
    init = next((int(line) for line in lines if line.isdigit()), None)
    said = [line for line in lines if not line.isdigit()]
    if init is None or not said or not said[0].startswith("ready"):
        os.close(go_write)
        os.waitpid(spawner, 0)
        raise SetupError(said[0] if said else "the command's init ended before it was ready")
    listener = None
    if said[0] != "ready":  # the init's listener, copied here before the init lets it go
        pidfd = os.pidfd_open(init)
        try:
            listener = linux.pidfd_getfd(pidfd, int(said[0].split()[1]))
        finally:
            os.close(pidfd)
    return Started(spawner, go_write, listener)


def _say(fd: int, line: str) -> None:
    os.write(fd, (line.replace("\n", " ") + "\n").encode("utf-8", "backslashreplace"))


def _spawn_init(uid: int, gid: int, ready: int, go: int, gate: seccomp_filter.Arch | None) -> int:
    try:
        linux.unshare(linux.CLONE_NEWPID)
    except OSError as error:
        _say(ready, f"unshare(pid) was refused ({error.strerror})")
        return exit_codes.DID_NOT_RUN
    init = os.fork()
    if init == 0:
        try:
            os._exit(_init(uid, gid, ready, go, gate))
        except BaseException as error:
            _say(ready, f"cannot start the command's init: {error}")
            os._exit(exit_codes.DID_NOT_RUN)
    _say(ready, str(init))
    os.close(ready)
    os.close(go)
    for sig in FORWARDED_SIGNALS:
        signal.signal(sig, lambda signum, _frame: os.kill(init, signum))
    _, status = os.waitpid(init, 0)
    return exit_code(status)


def exit_code(wait_status: int) -> int:
    code = os.waitstatus_to_exitcode(wait_status)
    return 128 - code if code < 0 else code


def _init(uid: int, gid: int, ready: int, go: int, gate: seccomp_filter.Arch | None) -> int:
    # Nothing of the supervisor's stays open here (the TUN device, the resolver, the record
    # channel's listeners): the command sees this process as its pid 1.
    low, high = sorted((ready, go))
    os.closerange(3, low)
    os.closerange(low + 1, high)
    os.closerange(high + 1, MAX_DESCRIPTOR)
    try:
        linux.unshare(linux.CLONE_NEWNS)  # this /proc is the command's; the sink keeps the host's
        linux.mount("proc", "/proc", "proc", linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC)
    except OSError as error:
        _say(ready, f"cannot mount a /proc for the command's pid namespace ({error})")
        return exit_codes.DID_NOT_RUN
    try:
        listener = seccomp_filter.install(gate) if gate else None
        if listener is not None:  # the supervisor copies it: dumpable until the command starts
            linux.set_dumpable(True)
    except OSError as error:
        _say(
            ready,
            f"the kernel refused the seccomp filter that guards unix sockets "
            f"({error.strerror}): a container's seccomp profile may forbid seccomp(2)",
        )
        return exit_codes.DID_NOT_RUN
    _say(ready, "ready" if listener is None else f"ready {listener}")
    os.close(ready)
    with os.fdopen(go, "rb") as job:  # the supervisor has its copy of the listener by now
        data = job.read()
    linux.set_dumpable(False)  # before the command exists: it may not trace or read its init
    if listener is not None:
        os.close(listener)
    if not data:  # the supervisor ended first: nothing runs
        return exit_codes.DID_NOT_RUN
    command, env = marshal.loads(data)
    child = os.fork()
    if child == 0:
        _exec_command(command, env, uid, gid)
    for sig in FORWARDED_SIGNALS:
        signal.signal(sig, lambda signum, _frame: _pass_on(child, signum))
    while True:
        pid, status = os.wait()
        if pid == child:
            return exit_code(status)


def _pass_on(child: int, signum: int) -> None:
    """A signal to the command; Ctrl-C's to its whole process group, as a terminal sends it
    (its session's first group is the command's own pid)."""
    if signum == signal.SIGINT:
        with contextlib.suppress(ProcessLookupError):  # before its setsid: the command alone
            os.killpg(child, signum)
            return
    with contextlib.suppress(ProcessLookupError):
        os.kill(child, signum)


def _exec_command(command: list[str], env: dict[str, str], uid: int, gid: int) -> None:
    """As the invoking user, in a user namespace of its own; never returns."""
    try:
        linux.set_dumpable(True)  # its own /proc files again: it writes its id maps
        linux.unshare(linux.CLONE_NEWUSER)
        linux.map_single_ids(uid, 0, gid, 0)
        # A session of its own, without the operator's terminal as its controlling one: the
        # command cannot push input into the operator's shell (TIOCSTI, CVE-2017-5226) nor
        # take the terminal's foreground. Its output still goes where the run's does.
        os.setsid()
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # as subprocess does: defaults, not ours
            signal.signal(sig, signal.SIG_DFL)
        os.execvpe(command[0], command, env)
    except FileNotFoundError:
        sys.stderr.write(f"cloudguard: command not found: {command[0]}\n")
        os._exit(exit_codes.COMMAND_NOT_FOUND)
    except PermissionError:
        sys.stderr.write(f"cloudguard: command not executable: {command[0]}\n")
        os._exit(exit_codes.COMMAND_NOT_EXECUTABLE)
    except BaseException as error:
        sys.stderr.write(f"cloudguard: cannot start {command[0]}: {error}\n")
        os._exit(exit_codes.COMMAND_NOT_FOUND)

"""Runs inside the hard seal: makes the namespaces, starts the command, serves the sink.

Started by `cloudguard run --hard` as `python -I -S` with a spec file and
the command. Steps, in order (any failure before the command starts is a
setup error: the host exits 75 naming it, and the command never runs):

1. new user (root mapped to the invoking user), network and mount namespaces;
2. a TUN device as the default route for IPv4 and IPv6, loopback up;
3. the resolver: /etc/resolv.conf bind-mounted to name 127.0.0.53, where the
   sink answers; resolver sockets outside the namespace masked;
4. credential homes masked;
5. the run's record keeper names bound in this network namespace, relayed to
   the host over the records pipe (`relay`): the refusers inside deliver here;
6. the supervisor made non-dumpable (nothing inside may trace it, read its
   memory or descriptors, or write its /proc files);
7. the command's init: pid 1 of a new pid namespace with its own /proc, which
   starts the command in a further user namespace mapped back to the invoking
   user (it is not root over the mounts or the network, so it can neither
   unmount a mask nor reroute around the sink) and exits with its status. The
   command cannot name the supervisor to signal, stop or starve it, and
   whatever it leaves behind dies with its init;
8. the sink until the init exits.

Progress goes to a status pipe only the host holds (`protocol` lines):
`started`, then `code`, `recorded` (records relayed) and, if a record could
not be relayed, `lost`; or `setup_error` with the cause.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import sys
from collections.abc import Sequence

from cloudguard import exit_codes
from cloudguard.guard.channel import Channel
from cloudguard.guard.hard import linux, masks, protocol
from cloudguard.guard.hard.relay import Relay
from cloudguard.guard.hard.sink import RESOLVER, Sink

TUN_NAME = "cg0"
TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
# The TUN's own addresses: the IPv4 dummy address (RFC 7600) and one from the IPv6
# discard-only prefix (RFC 6666); neither is a destination anything needs to reach.
TUN_SOURCE_V4 = "192.0.0.8/32"
TUN_SOURCE_V6 = "100::8/128"
FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
MAX_DESCRIPTOR = 1 << 20
COMMAND_NOT_FOUND = exit_codes.COMMAND_NOT_FOUND
COMMAND_NOT_EXECUTABLE = exit_codes.COMMAND_NOT_EXECUTABLE


class SetupError(Exception):
    """The seal could not be made; the message is the one-line cause."""


def _status(fd: int, **fields: object) -> None:
    os.write(fd, protocol.encode(fields.items()).encode("utf-8", "backslashreplace"))


def enter_namespaces(uid: int, gid: int) -> None:
    try:
        linux.unshare(linux.CLONE_NEWUSER | linux.CLONE_NEWNET | linux.CLONE_NEWNS)
    except OSError as error:
        raise SetupError(
            f"unshare(user, net, mount) was refused ({error.strerror}): unprivileged user "
            "namespaces are blocked here (a container needs seccomp/AppArmor to allow "
            "`unshare`, e.g. docker --security-opt seccomp=unconfined)"
        ) from None
    linux.map_single_ids(0, uid, 0, gid)
    # Nothing mounted here may propagate back to the host.
    linux.mount(None, "/", None, linux.MS_REC | linux.MS_PRIVATE)


def _ipv6_enabled() -> bool:
    try:
        with open("/proc/sys/net/ipv6/conf/default/disable_ipv6") as handle:
            return handle.read().strip() == "0"
    except OSError:
        return False  # a kernel built without IPv6


def make_tun(ip_tool: str, batch_file: str) -> int:
    try:
        tun = os.open("/dev/net/tun", os.O_RDWR)
    except OSError as error:
        raise SetupError(
            f"cannot open /dev/net/tun ({error.strerror}): load the tun module "
            "(`modprobe tun`) or pass the device to the container (`--device /dev/net/tun`)"
        ) from None
    import fcntl

    try:
        fcntl.ioctl(tun, TUNSETIFF, struct.pack("16sH", TUN_NAME.encode(), IFF_TUN | IFF_NO_PI))
    except OSError as error:
        raise SetupError(
            f"/dev/net/tun refused to make a TUN device ({error.strerror}): it is not the "
            "kernel's tun driver, or the container withholds it (`--device /dev/net/tun`)"
        ) from None
    commands = [
        "link set lo up",
        f"link set {TUN_NAME} up",
        f"addr add {TUN_SOURCE_V4} dev {TUN_NAME}",
        f"route add default dev {TUN_NAME}",
    ]
    if _ipv6_enabled():  # where IPv6 is off, no IPv6 packet can leave either
        commands += [
            f"addr add {TUN_SOURCE_V6} dev {TUN_NAME} nodad",
            f"route add ::/0 dev {TUN_NAME}",
        ]
    with open(batch_file, "w") as handle:
        handle.write("\n".join(commands) + "\n")
    pid = os.posix_spawn(ip_tool, [ip_tool, "-batch", batch_file], os.environ)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SetupError(f"`{ip_tool} -batch` could not route the namespace through the sink")
    return tun


def point_resolver(seal_root: str) -> socket.socket:
    resolver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    resolver.bind(RESOLVER)
    conf = os.path.join(seal_root, "resolv.conf")
    with open(conf, "w") as handle:
        handle.write(f"nameserver {RESOLVER[0]}\noptions attempts:1\n")
    if not os.path.exists("/etc/resolv.conf"):
        # Without the file the C library asks 127.0.0.1:53, which the sink does not own.
        raise SetupError(
            "/etc/resolv.conf does not exist, so lookups could not be pointed at the sink: "
            "create it (any content)"
        )
    linux.mount(conf, "/etc/resolv.conf", None, linux.MS_BIND)
    empty = os.path.join(seal_root, "empty")
    for directory in masks.RESOLVER_SOCKET_DIRS:
        masks.mask(directory, empty)
    return resolver


class Started:
    """The spawner (its pid) and the word that lets the command start (`go`)."""

    def __init__(self, spawner: int, go: int) -> None:
        self.spawner = spawner
        self._go = go

    def go(self) -> None:
        """Start the command: only after the host was told `started` (a supervisor that dies
        before this leaves a run in which nothing ran, 75; after it, one that did, 97)."""
        os.write(self._go, b"go")
        os.close(self._go)


def start_command(command: list[str], uid: int, gid: int, keep_out: Sequence[int]) -> Started:
    """Fork the spawner, which starts the command's init in a new pid namespace: once the init
    has its /proc, or SetupError naming why it could not be made. The command itself waits
    for `Started.go`.

    A process that entered a new pid namespace may start no thread (and every later
    fork of it lands in that namespace): the spawner does that, single-threaded, so
    the supervisor keeps its threads (the record channel, forwarded connections).
    The spawner exits with the init's status. `keep_out`: descriptors closed in it.
    """
    ready_read, ready_write = os.pipe()
    go_read, go_write = os.pipe()
    spawner = os.fork()
    if spawner == 0:
        for fd in (ready_read, go_write, *keep_out):
            os.close(fd)
        try:
            os._exit(_spawn_init(command, uid, gid, ready_write, go_read))
        except BaseException as error:  # never return into the supervisor's loop
            os.write(ready_write, f"cannot start the command's init: {error}".encode())
            os._exit(exit_codes.DID_NOT_RUN)
    os.close(ready_write)
    os.close(go_read)
    with os.fdopen(ready_read, "rb") as ready:
        answer = ready.read().decode("utf-8", "replace")
    if answer != "ready":
        os.close(go_write)
        os.waitpid(spawner, 0)
        raise SetupError(answer or "the command's init ended before it was ready")
    return Started(spawner, go_write)


def _spawn_init(command: list[str], uid: int, gid: int, ready: int, go: int) -> int:
    try:
        linux.unshare(linux.CLONE_NEWPID)
    except OSError as error:
        os.write(ready, f"unshare(pid) was refused ({error.strerror})".encode())
        return exit_codes.DID_NOT_RUN
    init = os.fork()
    if init == 0:
        try:
            os._exit(_init(command, uid, gid, ready, go))
        except BaseException as error:
            os.write(ready, f"cannot start the command's init: {error}".encode())
            os._exit(exit_codes.DID_NOT_RUN)
    os.close(ready)
    for sig in FORWARDED_SIGNALS:
        signal.signal(sig, lambda signum, _frame: os.kill(init, signum))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _, status = os.waitpid(init, 0)
    return _exit_code(status)


def _exit_code(wait_status: int) -> int:
    code = os.waitstatus_to_exitcode(wait_status)
    return 128 - code if code < 0 else code


def _init(command: list[str], uid: int, gid: int, ready: int, go: int) -> int:
    """Pid 1: a /proc of the command's own pid namespace, the command, its status.

    It reaps every orphan, passes on the signals the supervisor forwards, and
    ignores the rest (the kernel delivers a signal to a namespace's init only when
    it has a handler: the command cannot kill or stop it). When it exits, the
    kernel kills whatever is left in the namespace.
    """
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
        os.write(ready, f"cannot mount a /proc for the command's pid namespace ({error})".encode())
        return exit_codes.DID_NOT_RUN
    os.write(ready, b"ready")
    os.close(ready)
    if os.read(go, 2) != b"go":  # the supervisor ended first: nothing runs
        return exit_codes.DID_NOT_RUN
    os.close(go)
    child = os.fork()
    if child == 0:
        _exec_command(command, uid, gid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the terminal sends it to the command itself
    for sig in FORWARDED_SIGNALS:
        signal.signal(sig, lambda signum, _frame: os.kill(child, signum))
    while True:
        pid, status = os.wait()
        if pid == child:
            return _exit_code(status)


def _exec_command(command: list[str], uid: int, gid: int) -> None:
    """As the invoking user, in a user namespace of its own; never returns."""
    try:
        linux.set_dumpable(True)  # its own /proc files again: it writes its id maps
        linux.unshare(linux.CLONE_NEWUSER)
        linux.map_single_ids(uid, 0, gid, 0)
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # as subprocess does: defaults, not ours
            signal.signal(sig, signal.SIG_DFL)
        os.execvp(command[0], command)
    except FileNotFoundError:
        sys.stderr.write(f"cloudguard: command not found: {command[0]}\n")
        os._exit(COMMAND_NOT_FOUND)
    except PermissionError:
        sys.stderr.write(f"cloudguard: command not executable: {command[0]}\n")
        os._exit(COMMAND_NOT_EXECUTABLE)
    except BaseException as error:
        sys.stderr.write(f"cloudguard: cannot start {command[0]}: {error}\n")
        os._exit(COMMAND_NOT_FOUND)


def main(argv: list[str]) -> int:
    spec_path, separator, *command = argv
    assert separator == "--" and command, "usage: supervisor SPEC -- CMD..."
    with open(spec_path) as handle:
        spec = protocol.decode(handle.read())
    status = int(str(spec["status_fd"]))
    records = int(str(spec["records_fd"]))
    answers = int(str(spec["answers_fd"]))
    for fd in (status, records, answers):
        os.set_inheritable(fd, False)  # the command must not be able to speak for the seal
    relay = Relay(records, answers)
    root = str(spec["seal"])
    uid, gid = int(str(spec["uid"])), int(str(spec["gid"]))
    try:
        enter_namespaces(uid, gid)
        tun = make_tun(str(spec["ip"]), os.path.join(root, "routes.batch"))
        resolver = point_resolver(root)
        empty = os.path.join(root, "empty")
        masked = [path for path in spec["mask"] if masks.mask(path, empty)]
        forwards = []
        if spec["forward"]:
            from cloudguard.guard.hard import forward  # threads and relays: only when asked for

            for port in map(int, spec["forward"]):
                forwards.append((forward.inside_listener(port), forward.socket_path(root, port)))
        # The run's keepers, served here where the refusers inside can reach them.
        channel = Channel(spec["keeper"], relay.receive, relay.tamper)
        linux.become_subreaper()  # orphans stay our descendants: attribution searches only those
        linux.set_dumpable(False)  # after the id maps: nothing inside may trace or starve us
        started = start_command(command, uid, gid, keep_out=(status, records, answers))
    except SetupError as error:
        _status(status, setup_error=str(error))
        return exit_codes.DID_NOT_RUN
    except OSError as error:
        _status(status, setup_error=f"{error.strerror or error} ({error.filename or 'setup'})")
        return exit_codes.DID_NOT_RUN
    channel.start()  # a thread only now: the init was forked from a single-threaded process
    _status(status, started=len(masked))
    started.go()
    child = started.spawner

    def forward_signal(signum: int, _frame: object) -> None:
        os.kill(child, signum)

    for sig in FORWARDED_SIGNALS:
        signal.signal(sig, forward_signal)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the terminal sends it to the command too
    sink = Sink(tun=tun, resolver=resolver, relay=relay, seal_root=root, forwards=forwards)
    sink.serve(until=os.pidfd_open(child))
    _, wait_status = os.waitpid(child, 0)
    channel.close()  # what the command's refusers delivered before it ended is taken
    code = _exit_code(wait_status)
    _status(status, code=code, recorded=relay.count, **({"lost": relay.lost} if relay.lost else {}))
    return code

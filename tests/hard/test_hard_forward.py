"""`--forward PORT`: the host's 127.0.0.1:PORT is reachable inside; no other host port is."""

from __future__ import annotations

import sys
from pathlib import Path

from hard_helpers import hard_run, python_child
from named_checks import broken

from cloudguard.guard.hard import forward

FORWARDED, NOT_FORWARDED = 4566, 10000
HOST_SERVERS = f"""
import signal, socket, selectors, pathlib
signal.alarm(30)  # never outlive the test
selector = selectors.DefaultSelector()
for port, reply in (({FORWARDED}, b"host-A"), ({NOT_FORWARDED}, b"host-B")):
    selector.register(socket.create_server(("127.0.0.1", port)), selectors.EVENT_READ, reply)
pathlib.Path("ready").touch()
while True:
    for key, _ in selector.select():
        connection, _ = key.fileobj.accept()
        connection.sendall(key.data)
        connection.close()
"""
CLIENT = f"""
import socket
for name, port in (("A", {FORWARDED}), ("B", {NOT_FORWARDED})):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
            print(name, c.recv(16).decode() or "closed")
    except OSError as error:
        print(name, "refused", type(error).__name__)
"""


def test_a_forwarded_host_port_is_reachable_and_nothing_else(tmp_path: Path) -> None:
    server = tmp_path / "servers.py"
    server.write_text(HOST_SERVERS)
    setup = (
        f"cd {tmp_path} && {sys.executable} {server} & S=$!; "
        f"while [ ! -e {tmp_path}/ready ]; do sleep 0.02; done; "
    )
    run = hard_run(
        tmp_path,
        *python_child("-I", code=CLIENT),
        options=("--hard", "--forward", str(FORWARDED)),
        host_setup=setup,
    )

    assert f"hard=on forward=127.0.0.1:{FORWARDED}" in run.stderr, run.output
    assert "A host-A" in run.stdout, f"the forwarded port was not reached:\n{run.output}"
    assert "B refused" in run.stdout, f"a port that was not named was reachable:\n{run.output}"
    assert run.returncode == 0 and run.reaches() == (), run.output


def test_forward_without_hard_is_a_usage_error(tmp_path: Path) -> None:
    run = hard_run(tmp_path, "true", options=("--forward", str(FORWARDED)))

    assert run.returncode == 2 and "--forward needs --hard" in run.stderr, run.output


# A host service on the forwarded port. `hold` accepts each connection and never answers; `greet`
# accepts each and says "held", holding it as well (a client can tell a relayed connection from
# one closed at once without waiting); `backlog` never accepts: its queue is full after one.
# When a client hangs up the command has ended: the service closes every connection and stops
# listening, so a relay still waiting on a broken sink's loop ends at once instead of holding
# the run open until the service's own alarm.
HOST_SERVICE = """
import pathlib, selectors, signal, socket, sys
signal.alarm(60)
port, mode = int(sys.argv[1]), sys.argv[2]
if mode == "backlog":
    server = socket.create_server(("127.0.0.1", port), backlog=1)
    filler = [socket.socket() for _ in range(3)]
    for client in filler:
        client.setblocking(False)
        client.connect_ex(("127.0.0.1", port))
    pathlib.Path("ready").touch()
    signal.pause()
server = socket.create_server(("127.0.0.1", port), backlog=socket.SOMAXCONN)
selector = selectors.DefaultSelector()
selector.register(server, selectors.EVENT_READ)
pathlib.Path("ready").touch()
while True:
    for key, _ in selector.select():
        if key.fileobj is server:
            connection = server.accept()[0]
            if mode == "greet":
                connection.sendall(b"held")
            selector.register(connection, selectors.EVENT_READ)
        elif not key.fileobj.recv(16):
            for held in list(selector.get_map().values()):
                held.fileobj.close()
            signal.pause()
"""
# The reach's bound, the client's own: on a loaded two-core host the sink refuses it in about
# 15 ms behind the 2,000 forwarded connections; a sink that waits on them never does.
REACH_BOUND = 3
MANY_FORWARDED_THEN_A_REACH = f"""
import socket
held = []
for _ in range(2000):
    s = socket.socket()
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", {FORWARDED}))
    except BlockingIOError:
        pass
    held.append(s)
try:
    socket.create_connection(("198.51.100.7", 443), timeout={REACH_BOUND})
except OSError as error:
    print("reach refused", type(error).__name__)
"""


def host_service(tmp_path: Path, mode: str) -> str:
    server = tmp_path / "service.py"
    server.write_text(HOST_SERVICE)
    return (
        f"cd {tmp_path} && {sys.executable} {server} {FORWARDED} {mode} & S=$!; "
        f"while [ ! -e {tmp_path}/ready ]; do sleep 0.02; done; cd - >/dev/null; "
    )


def test_forwarded_connections_to_a_silent_service_do_not_hold_the_sink(tmp_path: Path) -> None:
    # Were the sink's loop to wait on the relays, the reach would go unanswered: its connect
    # would time out (the bound is the client's own), and the run end with the command.
    run = hard_run(
        tmp_path,
        *python_child("-I", code=MANY_FORWARDED_THEN_A_REACH),
        options=("--hard", "--forward", str(FORWARDED)),
        host_setup=host_service(tmp_path, "hold"),
    )

    assert "reach refused ConnectionRefusedError" in run.stdout, broken(
        "the-sink-answers-while-forwards-wait",
        f"the sink did not answer while forwarded connections waited:\n{run.output}",
    )
    assert run.targets("hard-tcp") == ["198.51.100.7:443"], run.output
    assert run.returncode == 98, run.output


# The relay's connect bound, made short for this run by the test itself (it is the module's
# constant the relay reads), so that the client can wait well past it and still not for long.
CONNECT_BOUND = 0.3
SHORT_CONNECT = (
    "-c",
    "import runpy, sys; from cloudguard.guard.hard import forward; "
    "forward.CONNECT_TIMEOUT = float(sys.argv.pop(1)); "
    "runpy.run_module('cloudguard', run_name='__main__')",
    str(CONNECT_BOUND),
)
NEVER_CONNECTS = f"""
import socket
client = socket.create_connection(("127.0.0.1", {FORWARDED}), timeout={CONNECT_BOUND * 10})
try:
    print("closed" if client.recv(16) == b"" else "answered")
except TimeoutError:
    print("still open at ten times the relay's bound")
"""


def test_a_forward_the_host_never_completes_is_closed_after_the_bounded_connect(
    tmp_path: Path,
) -> None:
    run = hard_run(
        tmp_path,
        *python_child("-I", code=NEVER_CONNECTS),
        options=("--hard", "--forward", str(FORWARDED)),
        host_setup=host_service(tmp_path, "backlog"),
        launcher=SHORT_CONNECT,
    )

    assert run.stdout.strip() == "closed", broken(
        "the-relays-connect-is-bounded", f"the relay's connect was not bounded:\n{run.output}"
    )
    assert run.returncode == 0 and run.reaches() == (), run.output


# Each connection is either relayed (the service greets it) or closed at once: the client waits
# for one or the other on every connection, never for a time.
OVER_THE_BOUND = f"""
import select, socket
clients = [socket.create_connection(("127.0.0.1", {FORWARDED}), timeout=30) for _ in range(148)]
said = {{}}
while len(said) < len(clients):
    readable, _, _ = select.select([c for c in clients if c not in said], [], [], 30)
    if not readable:
        break
    said.update((c, c.recv(16) or b"closed") for c in readable)
told = list(said.values())
print("closed", told.count(b"closed"), "relayed", told.count(b"held"), "silent", 148 - len(said))
"""


def test_forwarded_connections_past_the_bound_are_closed_at_once(tmp_path: Path) -> None:
    run = hard_run(
        tmp_path,
        *python_child("-I", code=OVER_THE_BOUND),
        options=("--hard", "--forward", str(FORWARDED)),
        host_setup=host_service(tmp_path, "greet"),
    )

    relayed = ["closed", "20", "relayed", str(forward.MAX_RELAYS), "silent", "0"]
    assert run.stdout.split() == relayed, broken(
        "relays-past-the-bound-close-at-once",
        f"connections past the bound were not closed at once:\n{run.output}",
    )
    assert run.returncode == 0, run.output

"""`--forward PORT`: the host's 127.0.0.1:PORT is reachable inside; no other host port is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
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


# A host service that takes connections and never answers: `accept` makes the kernel complete
# each one; with `backlog` instead, it never accepts and its queue is full after one.
SILENT_SERVICE = """
import pathlib, signal, socket, sys, threading
signal.alarm(60)
server = socket.create_server(("127.0.0.1", int(sys.argv[1])), backlog=1)
held = []
if sys.argv[2] == "backlog":
    filler = [socket.socket() for _ in range(3)]
    for client in filler:
        client.setblocking(False)
        client.connect_ex(("127.0.0.1", int(sys.argv[1])))
    pathlib.Path("ready").touch()
    signal.pause()
pathlib.Path("ready").touch()
while True:
    held.append(server.accept()[0])
"""
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
    socket.create_connection(("198.51.100.7", 443), timeout=10)
except OSError as error:
    print("reach refused", type(error).__name__)
"""


def silent_service(tmp_path: Path, mode: str) -> str:
    server = tmp_path / "silent.py"
    server.write_text(SILENT_SERVICE)
    return (
        f"cd {tmp_path} && {sys.executable} {server} {FORWARDED} {mode} & S=$!; "
        f"while [ ! -e {tmp_path}/ready ]; do sleep 0.02; done; cd - >/dev/null; "
    )


def test_forwarded_connections_to_a_silent_service_do_not_hold_the_sink(tmp_path: Path) -> None:
    try:
        run = hard_run(
            tmp_path,
            *python_child("-I", code=MANY_FORWARDED_THEN_A_REACH),
            options=("--hard", "--forward", str(FORWARDED)),
            host_setup=silent_service(tmp_path, "accept"),
            timeout=45,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(
            broken(
                "the-sink-answers-while-forwards-wait",
                "the sink did not answer while forwarded connections waited: the run hung",
            )
        )

    assert "reach refused ConnectionRefusedError" in run.stdout, broken(
        "the-sink-answers-while-forwards-wait",
        f"the sink did not answer while forwarded connections waited:\n{run.output}",
    )
    assert run.targets("hard-tcp") == ["198.51.100.7:443"], run.output
    assert run.returncode == 98, run.output


NEVER_CONNECTS = f"""
import socket
client = socket.create_connection(("127.0.0.1", {FORWARDED}), timeout=30)
print("closed" if client.recv(16) == b"" else "answered")
"""


def test_a_forward_the_host_never_completes_is_closed_after_the_bounded_connect(
    tmp_path: Path,
) -> None:
    run = hard_run(
        tmp_path,
        *python_child("-I", code=NEVER_CONNECTS),
        options=("--hard", "--forward", str(FORWARDED)),
        host_setup=silent_service(tmp_path, "backlog"),
    )

    assert run.stdout.strip() == "closed", broken(
        "the-relays-connect-is-bounded", f"the relay's connect was not bounded:\n{run.output}"
    )
    assert run.returncode == 0 and run.reaches() == (), run.output


OVER_THE_BOUND = f"""
import select, socket
clients = [socket.create_connection(("127.0.0.1", {FORWARDED}), timeout=30) for _ in range(148)]
closed = set()
while len(closed) < 20:
    readable, _, _ = select.select([c for c in clients if c not in closed], [], [], 20)
    if not readable:
        break
    closed.update(c for c in readable if c.recv(16) == b"")
print("closed", len(closed), "open", len(clients) - len(closed))
"""


def test_forwarded_connections_past_the_bound_are_closed_at_once(tmp_path: Path) -> None:
    run = hard_run(
        tmp_path,
        *python_child("-I", code=OVER_THE_BOUND),
        options=("--hard", "--forward", str(FORWARDED)),
        host_setup=silent_service(tmp_path, "accept"),
    )

    assert run.stdout.split() == ["closed", "20", "open", str(forward.MAX_RELAYS)], broken(
        "relays-past-the-bound-close-at-once",
        f"connections past the bound were not closed at once:\n{run.output}",
    )
    assert run.returncode == 0, run.output

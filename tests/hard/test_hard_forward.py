"""`--forward PORT`: the host's 127.0.0.1:PORT is reachable inside; no other host port is."""

from __future__ import annotations

import sys
from pathlib import Path

from hard_helpers import hard_run, python_child

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

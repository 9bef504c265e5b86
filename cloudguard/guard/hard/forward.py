"""`--forward PORT`: host-loopback 127.0.0.1:PORT reachable from inside, and nothing else.

A filesystem unix socket crosses network namespaces: inside, the sink
listens on 127.0.0.1:PORT and relays each connection to
`<seal>/forward/PORT.sock`; on the host, `cloudguard run` listens there and
relays to 127.0.0.1:PORT. One socket per named port: there is no wildcard.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Iterable

LOOPBACK = "127.0.0.1"


def socket_path(seal_root: str | os.PathLike[str], port: int) -> str:
    return os.path.join(seal_root, "forward", f"{port}.sock")


def describe(ports: Iterable[int]) -> str:
    return ",".join(f"{LOOPBACK}:{port}" for port in ports)


def _pump(source: socket.socket, destination: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            destination.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            destination.shutdown(socket.SHUT_WR)


def relay(a: socket.socket, b: socket.socket) -> None:
    """Copy both ways until both sides are done, then close both (in background threads)."""

    def both() -> None:
        other = threading.Thread(target=_pump, args=(b, a), daemon=True)
        other.start()
        _pump(a, b)
        other.join()
        a.close()
        b.close()

    threading.Thread(target=both, daemon=True).start()


def connect_host(port: int) -> socket.socket:
    return socket.create_connection((LOOPBACK, port))


def connect_unix(path: str) -> socket.socket:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    return conn


class HostForwarders:
    """The host side: one unix listener per named port, each relaying to 127.0.0.1:PORT."""

    def __init__(self, seal_root: str | os.PathLike[str], ports: Iterable[int]) -> None:
        self.listeners: list[socket.socket] = []
        ports = list(ports)
        if ports:
            os.mkdir(os.path.join(seal_root, "forward"), 0o700)
        for port in ports:
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(socket_path(seal_root, port))
            listener.listen(64)
            self.listeners.append(listener)
            threading.Thread(target=self._serve, args=(listener, port), daemon=True).start()

    def _serve(self, listener: socket.socket, port: int) -> None:
        while True:
            try:
                inside, _ = listener.accept()
            except OSError:
                return  # closed: the run is over
            try:
                relay(inside, connect_host(port))
            except OSError:
                inside.close()  # nothing listens on the host's port: the client sees a close

    def close(self) -> None:
        for listener in self.listeners:
            listener.close()


def inside_listener(port: int) -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((LOOPBACK, port))
    listener.listen(64)
    return listener

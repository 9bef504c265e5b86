"""`--forward PORT`: host-loopback 127.0.0.1:PORT reachable from inside, and nothing else.

Inside, the sink listens on 127.0.0.1:PORT for each named port. Each
connection it accepts is handed, as a descriptor, to `cloudguard run` over
a socket pair the two made before the namespaces existed (no path: nothing
inside can replace it or aim it elsewhere). The host connects to its own
127.0.0.1:PORT, within `CONNECT_TIMEOUT`, and relays both ways on threads
of its own, at most `MAX_RELAYS` at once (past that a connection is closed
at once); the sink's loop never waits for any of it. One listener per
named port: there is no wildcard.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterable

LOOPBACK = "127.0.0.1"
CONNECT_TIMEOUT = 5.0  # seconds for the host's service to accept
MAX_RELAYS = 128  # forwarded connections relayed at once


def describe(ports: Iterable[int]) -> str:
    return ",".join(f"{LOOPBACK}:{port}" for port in ports)


def channel() -> tuple[socket.socket, socket.socket]:
    """(the host's end, the supervisor's end) of the socket pair connections travel on."""
    host, inside = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    return host, inside


def inside_listener(port: int) -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((LOOPBACK, port))
    listener.listen(socket.SOMAXCONN)
    return listener


def _pump(source: socket.socket, destination: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            destination.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            destination.shutdown(socket.SHUT_WR)


class HostForwarders:
    """The host side: takes each connection the sink hands over and relays it to its port."""

    def __init__(self, channel_end: socket.socket, ports: Iterable[int]) -> None:
        self.channel = channel_end
        self.ports = frozenset(ports)
        self.busy = 0  # connections closed because MAX_RELAYS were being relayed
        self._slots = threading.BoundedSemaphore(MAX_RELAYS)
        self._thread = threading.Thread(target=self._serve, name="cloudguard-forward", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                message, fds, _, _ = socket.recv_fds(self.channel, 2, 1)
            except OSError:
                return
            if not message and not fds:
                return  # the supervisor is gone: the run is over
            inside = socket.socket(fileno=fds[0]) if fds else None
            port = int.from_bytes(message, "big")
            if inside is None or port not in self.ports:
                if inside is not None:
                    inside.close()
                continue
            if not self._slots.acquire(blocking=False):
                self.busy += 1
                inside.close()
                continue
            threading.Thread(target=self._relay, args=(inside, port), daemon=True).start()

    def _relay(self, inside: socket.socket, port: int) -> None:
        try:
            with socket.create_connection((LOOPBACK, port), timeout=CONNECT_TIMEOUT) as host:
                host.settimeout(None)
                other = threading.Thread(target=_pump, args=(host, inside), daemon=True)
                other.start()
                _pump(inside, host)
                other.join()
        except OSError:
            pass  # nothing listens there, or it did not accept in time: the client sees a close
        finally:
            inside.close()
            self._slots.release()

    def close(self) -> None:
        self.channel.close()

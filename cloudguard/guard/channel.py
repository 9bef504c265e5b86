"""The record channel: the socket every refuser delivers its record on, served on one thread.

A SOCK_SEQPACKET unix socket in the abstract namespace, under a random name
(`reach.keeper_name`), and (for a run's keeper) the same socket at a path, for
refusers in another network namespace (`cloudguard.guard.rendezvous`): one
message per record, one answer (`ok`) per message,
sent only after the receiver took the record. Why this channel, and what the
record keeper does with what arrives: `cloudguard.guard.keeper`. Inside the
hard seal the supervisor serves the same names and relays what arrives to the
host (`cloudguard.guard.hard.relay`); on one more name, `SEAL_KEEPERS`, it
tells every connection those names (`told`) and closes it: a `cloudguard run`
nested inside the seal whose environment dropped `CLOUDGUARD_KEEPER` learns
there whom to deliver to as well (`cloudguard.guard.rendezvous.around_seal`).

Stdlib only and no `json`: the hard seal's supervisor imports this on its
start-up budget; what a message means is the receiver's to decide.
"""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import socket
import threading
from collections.abc import Callable, Iterable, Iterator

MAX_MESSAGE = 1 << 20  # a record is bounded (redaction.MAX_ARGS x MAX_ARG_CHARS) well below this
# A suite never holds this many refusals open at once; past it the channel is being flooded.
MAX_OPEN_CONNECTIONS = 1024
ACK = b"ok"
# The abstract name on which a hard seal's supervisor tells its keepers' addresses (`told`).
# Fixed, so that a nested run can find it; bound in the seal's own network namespace before
# the command starts and held until the command's init exited, so nothing inside can bind it.
SEAL_KEEPERS = "cloudguard-seal-keepers"


class Channel:
    """Serves record deliveries on SEQPACKET sockets, one thread; each record goes to `keep`
    before its refuser is answered, and anything amiss to `tamper`. `names`: abstract names,
    or absolute paths (bound in the filesystem). `told`: what every connection to the
    abstract name `SEAL_KEEPERS` is sent before it is closed (None: that name is not bound).
    """

    def __init__(
        self,
        names: Iterable[str],
        receive: Callable[[bytes], bool],
        tamper: Callable[[str], None],
        *,
        told: bytes | None = None,
    ) -> None:
        self._receive = receive  # takes one message; True: taken, answer the refuser
        self._tamper = tamper
        self._listeners: list[socket.socket] = []
        self._told = told
        self._teller: socket.socket | None = None  # the listener on SEAL_KEEPERS
        try:
            for name in names:
                self._listeners.append(_listener(name))
            if told is not None:
                self._teller = _listener(SEAL_KEEPERS)
                self._listeners.append(self._teller)
        except OSError:
            self._close_listeners()
            raise
        self._wake_read, self._wake_write = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self._open: set[socket.socket] = set()
        self._thread: threading.Thread | None = None

    def start(self) -> Channel:
        """Serve on a thread. Until then deliveries wait, queued in the listening sockets."""
        self._thread = threading.Thread(target=self._serve_or_fail_closed, daemon=True)
        self._thread.start()
        return self

    def _serve_or_fail_closed(self) -> None:
        try:
            self._serve()
        except BaseException as error:  # a channel that stopped hears nothing: fail closed
            self._tamper(f"the record keeper stopped serving ({error!r})")

    def _serve(self) -> None:
        with selectors.DefaultSelector() as selector:
            for listener in self._listeners:
                told = listener is self._teller
                selector.register(listener, selectors.EVENT_READ, "tell" if told else "accept")
            selector.register(self._wake_read, selectors.EVENT_READ, "stop")
            while True:
                for key, _ in selector.select():
                    if key.data == "stop":  # what is queued already is still taken
                        for listener in self._listeners:
                            if listener is not self._teller:
                                self._accept(selector, listener)
                        for connection in list(self._open):
                            self._read(selector, connection)
                        return
                    if key.data == "tell":
                        self._tell(key.fileobj)  # type: ignore[arg-type]
                    elif key.data == "accept":
                        self._accept(selector, key.fileobj)  # type: ignore[arg-type]
                    else:
                        self._read(selector, key.fileobj)  # type: ignore[arg-type]

    def _waiting(self, listener: socket.socket) -> Iterator[socket.socket]:
        """Each connection waiting on `listener`, until none is; out of descriptors is a
        flood, told to `tamper`."""
        while True:
            try:
                connection, _ = listener.accept()
            except BlockingIOError:
                return
            except OSError as error:
                if error.errno not in (errno.EMFILE, errno.ENFILE):
                    raise
                self._tamper("the record keeper ran out of descriptors (a flood of connections)")
                return
            yield connection

    def _accept(self, selector: selectors.BaseSelector, listener: socket.socket) -> None:
        for connection in self._waiting(listener):
            if len(self._open) >= MAX_OPEN_CONNECTIONS:
                connection.close()
                self._tamper(f"over {MAX_OPEN_CONNECTIONS} connections held open to the keeper")
                continue
            connection.setblocking(False)
            self._open.add(connection)
            selector.register(connection, selectors.EVENT_READ, "read")

    def _tell(self, listener: socket.socket) -> None:
        """Each waiting connection on SEAL_KEEPERS: sent `told`, closed. Nothing is read and
        nothing stays open, so connections there cannot pile up."""
        assert self._told is not None
        for connection in self._waiting(listener):
            with contextlib.suppress(OSError):  # a caller gone, or one that reads nothing
                connection.setblocking(False)
                connection.send(self._told)
            connection.close()

    def _read(self, selector: selectors.BaseSelector, connection: socket.socket) -> None:
        try:
            message = connection.recv(MAX_MESSAGE)
        except BlockingIOError:
            return
        except OSError:
            message = b""
        if message and self._receive(message):
            with contextlib.suppress(OSError):  # a refuser gone: its record is kept all the same
                connection.send(ACK)
        selector.unregister(connection)
        self._open.discard(connection)
        connection.close()

    def close(self) -> None:
        """Take what is queued, then stop. Idempotent."""
        if self._wake_write < 0:
            return
        os.write(self._wake_write, b"x")
        if self._thread is None:
            self.start()  # only to take what is queued
        assert self._thread is not None
        self._thread.join()
        for connection in self._open:
            connection.close()
        self._open.clear()
        self._close_listeners()
        for fd in (self._wake_read, self._wake_write):
            os.close(fd)
        self._wake_read = self._wake_write = -1

    def _close_listeners(self) -> None:
        for listener in self._listeners:
            listener.close()
        self._listeners.clear()


def _listener(name: str) -> socket.socket:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
    try:
        listener.bind(name if name.startswith("/") else b"\0" + name.encode("ascii"))
        listener.listen(socket.SOMAXCONN)
        listener.setblocking(False)
    except OSError:
        listener.close()
        raise
    return listener

"""The sink: records every packet that tries to leave the namespace, then refuses it at once.

It reads the TUN device that is the namespace's default route (IPv4 and
IPv6) and answers lookups on every resolver address (`resolver`: UDP and
TCP). Record, then refuse: each TCP SYN is handed to the relay (on to the
host's record keeper) before its reset is sent, each UDP datagram before its
ICMP unreachable, each DNS query before its answer. Packets are read in
batches; a batch's records go to the host in one write and one wait, and
only then are its packets answered.

Nothing is lost silently: what cg0's queue or a resolver socket's buffer
dropped before the sink could read it is counted by the kernel and reported
at the end (`dropped`); the host fails the run closed (97) naming how many.
Only the kernel's own chatter is left out, by protocol (IGMP, MLD, router and
neighbour discovery), never by destination (`packets`).

A connection to a `--forward` port is accepted here and handed, as a
descriptor, to the host over a socket only the two hold; the host connects
and relays it (`forward`). Nothing on this loop waits for a forwarded
connection.
"""

from __future__ import annotations

import os
import selectors
import socket
import struct
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

from cloudguard.guard.hard import attribution, diag, dns, namespaces, packets, resolver
from cloudguard.guard.hard.relay import Relay

MAX_PACKET = 65536
BATCH = 1024  # packets read together: their records share one look at /proc and one relay
MAX_TCP_QUERIES = 64  # DNS-over-TCP connections open at once
SO_MEMINFO = 55
SK_MEMINFO_DROPS = 8
T = TypeVar("T")


def _batches(read: Callable[[], T]) -> Iterator[list[T]]:
    """What `read` returns until it would block, in batches of at most BATCH."""
    while True:
        batch = []
        for _ in range(BATCH):
            try:
                batch.append(read())
            except BlockingIOError:
                break
        if not batch:
            return
        yield batch


def _accepted(listener: socket.socket) -> Iterator[socket.socket]:
    """Each connection waiting on a non-blocking listener."""
    while True:
        try:
            yield listener.accept()[0]
        except BlockingIOError:
            return


class Sink:
    def __init__(
        self,
        *,
        tun: int,
        listeners: resolver.Listeners,
        relay: Relay,
        flows: attribution.Flows | None = None,
        forwards: Mapping[socket.socket, int] | None = None,
        forward_channel: socket.socket | None = None,
    ) -> None:
        self.tun = tun
        self.listeners = listeners
        self.relay = relay
        self.flows = flows or attribution.Flows()
        self.forwards = dict(forwards or {})  # inside listener -> the host port it stands for
        self.forward_channel = forward_channel  # the host's end: each connection, as a descriptor
        self.seal_root = ""  # where pytest names its running test (known once the seal is made)
        self.probe_name: str | None = None  # the supervisor's own lookup: answered, never recorded
        self.pool = dns.Pool()
        self.recent_senders: list[int] = []
        self.parents = attribution.Parents()  # the senders' parents' numbers inside
        self.sockets = diag.SocketTable()
        self.tcp_queries: dict[socket.socket, bytearray] = {}
        self.selector = selectors.DefaultSelector()
        self.selector.register(tun, selectors.EVENT_READ, self._drain_tun)
        for udp in listeners.udp:
            self.selector.register(udp, selectors.EVENT_READ, self._drain_udp)
        for tcp in listeners.tcp:
            self.selector.register(tcp, selectors.EVENT_READ, self._accept_query)
        for listener in self.forwards:
            listener.setblocking(False)
            self.selector.register(listener, selectors.EVENT_READ, self._accept_forward)
        os.set_blocking(tun, False)

    # -- the loop -------------------------------------------------------------------------

    def serve(self, until: int, deadline: float | None = None) -> bool:
        """Serve until the descriptor `until` is readable (True: then drain what is queued) or
        `deadline` (a monotonic time) passes (False)."""
        self.selector.register(until, selectors.EVENT_READ, None)
        try:
            while True:
                timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
                events = self.selector.select(timeout)
                if not events and deadline is not None and time.monotonic() >= deadline:
                    return False
                for key, _ in events:
                    if key.data is None:
                        self._drain_tun(None)
                        for udp in self.listeners.udp:
                            self._drain_udp(udp)
                        return True
                    key.data(key.fileobj)
        finally:
            self.selector.unregister(until)

    def _snapshot(self) -> attribution.Snapshot:
        return attribution.Snapshot(
            self.sockets,
            self.recent_senders,
            self.seal_root,
            flows=self.flows,
            parents=self.parents,
        )

    def _drain_tun(self, _: object) -> None:
        """Everything queued, in batches; a batch's records are held before any is answered."""
        for batch in _batches(lambda: os.read(self.tun, MAX_PACKET)):
            snapshot = self._snapshot()
            handled = [self.handle_packet(raw, snapshot) for raw in batch]
            self.relay.record_many([entry for entry, _ in handled if entry])
            for _, reply in handled:
                if reply:
                    os.write(self.tun, reply)

    def _drain_udp(self, udp: socket.socket) -> None:
        for batch in _batches(lambda: udp.recvfrom(MAX_PACKET)):
            snapshot = self._snapshot()
            local = udp.getsockname()[:2]
            handled = [
                (self.handle_query(m, peer[:2], local, packets.UDP, snapshot), peer)
                for m, peer in batch
            ]
            self.relay.record_many([entry for (entry, _), _ in handled if entry])
            for (_, reply), peer in handled:
                if reply:
                    udp.sendto(reply, peer)

    def _accept_query(self, listener: socket.socket) -> None:
        for client in _accepted(listener):
            if len(self.tcp_queries) >= MAX_TCP_QUERIES:
                client.close()  # a flood of idle connections: the next ones are closed at once
                continue
            client.setblocking(False)
            self.tcp_queries[client] = bytearray()
            self.selector.register(client, selectors.EVENT_READ, self._read_query)

    def _read_query(self, client: socket.socket) -> None:
        """DNS over TCP: each message a two-byte length, then the query."""
        buffer = self.tcp_queries[client]
        try:
            data = client.recv(MAX_PACKET)
        except OSError:
            data = b""
        buffer += data
        messages = []
        while len(buffer) >= 2 and len(buffer) >= 2 + struct.unpack_from("!H", buffer)[0]:
            length = struct.unpack_from("!H", buffer)[0]
            messages.append(bytes(buffer[2 : 2 + length]))
            del buffer[: 2 + length]
        if messages:
            snapshot = self._snapshot()
            peer, local = client.getpeername()[:2], client.getsockname()[:2]
            handled = [self.handle_query(m, peer, local, packets.TCP, snapshot) for m in messages]
            self.relay.record_many([entry for entry, _ in handled if entry])
            try:
                for _, reply in handled:
                    if reply:
                        client.sendall(struct.pack("!H", len(reply)) + reply)
            except OSError:
                data = b""  # the client is gone or stalled: close it
        if not data:
            self.selector.unregister(client)
            del self.tcp_queries[client]
            client.close()

    def _accept_forward(self, listener: socket.socket) -> None:
        """Hand each connection to the host, which connects and relays it (never waits here)."""
        for inside in _accepted(listener):
            try:
                if self.forward_channel is not None:
                    port = self.forwards[listener].to_bytes(2, "big")
                    socket.send_fds(
                        self.forward_channel, [port], [inside.fileno()], socket.MSG_DONTWAIT
                    )
            except OSError:
                pass  # the host's relays are all busy or gone: the client sees a close
            finally:
                inside.close()

    # -- one packet, one query ------------------------------------------------------------

    def handle_packet(
        self, raw: bytes, snapshot: attribution.Snapshot
    ) -> tuple[dict[str, object] | None, bytes | None]:
        """The record of a packet leaving the namespace, and the refusal to send back."""
        packet = packets.parse(raw)
        if packet is None or packet.is_kernel_noise():
            return None, None
        if packet.protocol == packets.TCP and not packet.is_syn:
            return None, None  # only a SYN starts an attempt; it was already answered with a reset
        refusal = None
        if packet.protocol == packets.TCP:
            refusal = packets.tcp_reset(packet)
        elif packet.protocol == packets.UDP:
            refusal = packets.port_unreachable(packet)
        query = dns.parse_query(packet.payload) if packet.destination_port == 53 else None
        if query is not None and query.name == self.probe_name:
            return None, refusal  # the probe's lookup went past the sink: refused, unrecorded
        name = self.pool.name_of(packet.destination)
        host = name or (f"[{packet.destination}]" if packet.version == 6 else packet.destination)
        extra: dict[str, object] = {
            "protocol": packet.protocol_name,
            "address": packet.destination,
            "port": packet.destination_port,
            "name": name,
        }
        if query is not None:
            extra["query"] = query.name  # a lookup sent straight to an outside resolver
        target = f"{host}:{packet.destination_port}" if packet.destination_port else host
        via = {packets.TCP: "hard-tcp", packets.UDP: "hard-udp"}.get(packet.protocol, "hard-ip")
        local = (packet.source, packet.source_port)
        remote = (packet.destination, packet.destination_port)
        return self._entry(via, target, packet.protocol, local, remote, extra, snapshot), refusal

    def handle_query(
        self,
        message: bytes,
        peer: tuple[str, int],
        local: tuple[str, int],
        protocol: int,
        snapshot: attribution.Snapshot,
    ) -> tuple[dict[str, object] | None, bytes | None]:
        query = dns.parse_query(message)
        if query is None:
            return None, None
        reply = dns.answer(query, self.pool)
        if query.name == self.probe_name:
            return None, reply
        extra: dict[str, object] = {
            "protocol": "dns" if protocol == packets.UDP else "dns-tcp",
            "name": query.name,
            "query_type": query.type_name,
        }
        entry = self._entry("hard-dns", query.name, protocol, peer, local, extra, snapshot)
        return entry, reply

    def _entry(
        self,
        via: str,
        target: str,
        protocol: int,
        local: tuple[str, int],
        remote: tuple[str, int],
        extra: dict[str, object],
        snapshot: attribution.Snapshot,
    ) -> dict[str, object]:
        sender = (
            snapshot.sender(protocol, local, remote)
            if protocol in (packets.TCP, packets.UDP)
            else attribution.Sender(unattributed=attribution.NO_SOCKET)
        )
        return attribution.reach_entry(via, target, sender, extra)

    # -- the end --------------------------------------------------------------------------

    def dropped(self) -> dict[str, int]:
        """What the kernel dropped before the sink read it, by where (only where some were)."""
        counts = {f"{namespaces.TUN_NAME} queue": namespaces.tx_dropped()}
        for udp in self.listeners.udp:
            meminfo = udp.getsockopt(socket.SOL_SOCKET, SO_MEMINFO, 4 * (SK_MEMINFO_DROPS + 1))
            host, port = udp.getsockname()[:2]
            where = f"resolver [{host}]:{port}" if ":" in host else f"resolver {host}:{port}"
            counts[where] = struct.unpack_from("=I", meminfo, 4 * SK_MEMINFO_DROPS)[0]
        return {where: count for where, count in counts.items() if count}

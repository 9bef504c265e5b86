"""The sink: records every packet that tries to leave the namespace, then refuses it at once.

It reads the TUN device that is the namespace's default route (IPv4 and
IPv6) and answers the resolver on 127.0.0.53:53. Record, then refuse: each
TCP SYN is handed to the relay (on to the host's record keeper) before its
reset is sent, each UDP datagram before its ICMP unreachable, each DNS query
before its answer. When a record cannot be relayed the sink keeps refusing and
the relay says so (`lost`), and the run fails closed.
"""

from __future__ import annotations

import os
import selectors
import socket
from collections.abc import Callable, Sequence

from cloudguard.guard import reach
from cloudguard.guard.hard import attribution, diag, dns, forward, packets
from cloudguard.guard.hard.relay import Relay

RESOLVER = ("127.0.0.53", 53)
MAX_PACKET = 65536
BATCH = 64  # packets read together: their records share one look at /proc


class Sink:
    def __init__(
        self,
        *,
        tun: int,
        resolver: socket.socket,
        relay: Relay,
        seal_root: str = "",
        forwards: Sequence[tuple[socket.socket, str]] = (),
    ) -> None:
        self.tun = tun
        self.resolver = resolver
        self.relay = relay
        self.seal_root = seal_root
        self.forwards = dict(forwards)  # inside listener -> the host relay's unix socket
        self.pool = dns.Pool()
        self.recent_senders: list[int] = []
        self.sockets = diag.SocketTable()
        self.snapshot = attribution.Snapshot(self.sockets, self.recent_senders, self.seal_root)
        os.set_blocking(tun, False)
        resolver.setblocking(False)

    # -- the loop -------------------------------------------------------------------------

    def serve(self, until: int, on_stop: Callable[[], None] = lambda: None) -> None:
        """Serve until the descriptor `until` (a pidfd) is readable, then drain what is queued."""
        selector = selectors.DefaultSelector()
        selector.register(self.tun, selectors.EVENT_READ, self.drain_tun)
        selector.register(self.resolver, selectors.EVENT_READ, self.drain_resolver)
        for listener in self.forwards:
            selector.register(listener, selectors.EVENT_READ, self._accept_forward)
        selector.register(until, selectors.EVENT_READ, None)
        while True:
            for key, _ in selector.select():
                if key.data is None:
                    on_stop()
                    self.drain_tun()
                    self.drain_resolver()
                    selector.close()
                    return
                key.data(key.fileobj) if key.data == self._accept_forward else key.data()

    def drain_tun(self) -> None:
        """Everything queued, as one batch sharing one look at /proc; each packet is recorded,
        then answered at once (the first one's refusal does not wait for the last's record)."""
        while True:
            batch = []
            for _ in range(BATCH):
                try:
                    batch.append(os.read(self.tun, MAX_PACKET))
                except BlockingIOError:
                    break
            if not batch:
                return
            self.snapshot = attribution.Snapshot(self.sockets, self.recent_senders, self.seal_root)
            for raw in batch:
                reply = self.handle_packet(raw)
                if reply:
                    os.write(self.tun, reply)

    def drain_resolver(self) -> None:
        while True:
            batch = []
            for _ in range(BATCH):
                try:
                    batch.append(self.resolver.recvfrom(MAX_PACKET))
                except BlockingIOError:
                    break
            if not batch:
                return
            self.snapshot = attribution.Snapshot(self.sockets, self.recent_senders, self.seal_root)
            for message, peer in batch:
                reply = self.handle_query(message, peer)
                if reply:
                    self.resolver.sendto(reply, peer)

    def _accept_forward(self, listener: socket.socket) -> None:
        inside, _ = listener.accept()
        try:
            forward.relay(inside, forward.connect_unix(self.forwards[listener]))
        except OSError:
            inside.close()

    # -- one packet, one query ------------------------------------------------------------

    def handle_packet(self, raw: bytes) -> bytes | None:
        """Record a packet leaving the namespace; the refusal to send back, if any."""
        packet = packets.parse(raw)
        if packet is None or packet.is_local_noise():
            return None
        if packet.protocol == packets.TCP and not packet.is_syn:
            return None  # only a SYN starts an attempt; it was already answered with a reset
        name = self.pool.name_of(packet.destination)
        host = name or (f"[{packet.destination}]" if packet.version == 6 else packet.destination)
        extra: dict[str, object] = {
            "protocol": packet.protocol_name,
            "address": packet.destination,
            "port": packet.destination_port,
            "name": name,
        }
        query = dns.parse_query(packet.payload) if packet.destination_port == 53 else None
        if query is not None:
            extra["query"] = query.name  # a lookup sent straight to an outside resolver
        target = f"{host}:{packet.destination_port}" if packet.destination_port else host
        via = {packets.TCP: "hard-tcp", packets.UDP: "hard-udp"}.get(packet.protocol, "hard-ip")
        local = (packet.source, packet.source_port)
        self.record(
            via,
            target,
            packet.protocol,
            local,
            (packet.destination, packet.destination_port),
            extra,
        )
        if packet.protocol == packets.TCP:
            return packets.tcp_reset(packet)
        if packet.protocol == packets.UDP:
            return packets.port_unreachable(packet)
        return None

    def handle_query(self, message: bytes, peer: tuple[str, int]) -> bytes | None:
        query = dns.parse_query(message)
        if query is None:
            return None
        extra: dict[str, object] = {
            "protocol": "dns",
            "name": query.name,
            "query_type": query.type_name,
        }
        self.record("hard-dns", query.name, packets.UDP, peer, RESOLVER, extra)
        return dns.answer(query, self.pool)

    def record(
        self,
        via: str,
        target: str,
        protocol: int,
        local: tuple[str, int],
        remote: tuple[str, int],
        extra: dict[str, object],
    ) -> None:
        sender = (
            self.snapshot.sender(protocol, local, remote)
            if protocol in (packets.TCP, packets.UDP)
            else attribution.Sender()  # ICMP and others: no socket to look up by address
        )
        environ = {reach.TEST_VARIABLE: sender.test} if sender.test else {}
        entry = reach.reach_record(via=via, argv=sender.argv, target=target, environ=environ)
        entry.update(extra, pid=sender.pid, ppid=sender.ppid, cwd=sender.cwd)
        self.relay.record(entry)

"""IP packets read from the sink's TUN device: parse the first header, build the refusal.

Stdlib only, and only cheap modules (no ipaddress, no dataclasses): the
supervisor that imports this starts on `run --hard`'s budget. A TCP SYN is
answered with a reset (the caller's connect fails with ECONNREFUSED at
once); a UDP datagram with ICMP port unreachable.
"""

from __future__ import annotations

import socket
import struct

TCP = 6
UDP = 17
ICMP = 1
IGMP = 2
ICMPV6 = 58
# IPv6 extension headers the kernel's own messages carry (MLD has a hop-by-hop router alert).
EXTENSION_HEADERS = (0, 43, 60)  # hop-by-hop, routing, destination options
FRAGMENT = 44
# ICMPv6 the kernel sends by itself when an interface comes up or joins a group: multicast
# listener queries/reports/done (130-132, 143), router and neighbour solicitations and
# advertisements (133, 135, 136). The command cannot make these (no raw socket inside).
KERNEL_ICMPV6 = frozenset((130, 131, 132, 133, 135, 136, 143))
PROTOCOL_NAMES = {TCP: "tcp", UDP: "udp", ICMP: "icmp", ICMPV6: "icmpv6"}
TCP_SYN = 0x02
TCP_RST = 0x04
TCP_ACK = 0x10


class Packet:
    __slots__ = (
        *("destination", "destination_port", "header", "protocol", "source"),
        *("source_port", "tcp_flags", "tcp_seq", "transport", "version"),
    )

    def __init__(
        self,
        version: int,
        protocol: int,
        source: str,
        destination: str,
        source_port: int,  # 0 when the protocol has no ports
        destination_port: int,
        tcp_flags: int,
        tcp_seq: int,
        header: bytes,  # the IP header as received
        transport: bytes,  # everything after the IP header
    ) -> None:
        self.version, self.protocol = version, protocol
        self.source, self.destination = source, destination
        self.source_port, self.destination_port = source_port, destination_port
        self.tcp_flags, self.tcp_seq = tcp_flags, tcp_seq
        self.header, self.transport = header, transport

    @property
    def protocol_name(self) -> str:
        return PROTOCOL_NAMES.get(self.protocol, f"ip-proto-{self.protocol}")

    @property
    def is_syn(self) -> bool:
        return self.protocol == TCP and (self.tcp_flags & (TCP_SYN | TCP_ACK)) == TCP_SYN

    @property
    def payload(self) -> bytes:
        """UDP payload (a DNS query sent straight to a resolver, say); empty otherwise."""
        return self.transport[8:] if self.protocol == UDP else b""

    def is_kernel_noise(self) -> bool:
        """The kernel's own chatter, told by protocol: IGMP membership reports, MLD, router and
        neighbour discovery. Never by destination: a datagram to a multicast group is a
        datagram (it would leave where a router forwards it), and a flood of them must not be
        a place to hide one; link-local unicast (169.254.169.254) is every cloud's metadata.
        """
        if self.version == 4:
            return self.protocol == IGMP
        return (
            self.protocol == ICMPV6
            and self.transport[:1] != b""
            and (self.transport[0] in KERNEL_ICMPV6)
        )


def parse(raw: bytes) -> Packet | None:
    """The packet's addresses, ports and TCP flags; None for anything too short to be IP."""
    if len(raw) < 20:
        return None
    version = raw[0] >> 4
    if version == 4:
        header_length = (raw[0] & 0x0F) * 4
        protocol = raw[9]
        source = socket.inet_ntop(socket.AF_INET, raw[12:16])
        destination = socket.inet_ntop(socket.AF_INET, raw[16:20])
    elif version == 6 and len(raw) >= 40:
        header_length, protocol = _upper_layer(raw)
        source = socket.inet_ntop(socket.AF_INET6, raw[8:24])
        destination = socket.inet_ntop(socket.AF_INET6, raw[24:40])
    else:
        return None
    header, transport = raw[:header_length], raw[header_length:]
    ports = (0, 0)
    flags = seq = 0
    if protocol in (TCP, UDP) and len(transport) >= 8:
        ports = struct.unpack("!HH", transport[:4])
    if protocol == TCP and len(transport) >= 14:
        seq = struct.unpack("!I", transport[4:8])[0]
        flags = transport[13]
    return Packet(version, protocol, source, destination, *ports, flags, seq, header, transport)


def _upper_layer(raw: bytes) -> tuple[int, int]:
    """(where the upper-layer header starts, its protocol) past IPv6 extension headers. A
    later fragment, or a header that runs past the packet, stops at the fragment header."""
    at, protocol = 40, raw[6]
    while protocol in EXTENSION_HEADERS and at + 2 <= len(raw):
        protocol, at = raw[at], at + (raw[at + 1] + 1) * 8
    if protocol == FRAGMENT and at + 8 <= len(raw):
        offset = struct.unpack_from("!H", raw, at + 2)[0] >> 3
        if offset == 0:
            protocol, at = raw[at], at + 8
    return min(at, len(raw)), protocol


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _addresses(packet: Packet) -> tuple[bytes, bytes]:
    """The reply's (source, destination): the request's, swapped, as raw bytes."""
    if packet.version == 4:
        return packet.header[16:20], packet.header[12:16]
    return packet.header[24:40], packet.header[8:24]


def _pseudo_header(packet: Packet, protocol: int, length: int) -> bytes:
    """The reply's pseudo-header: the request's addresses swapped."""
    source, destination = _addresses(packet)
    if packet.version == 4:
        return source + destination + struct.pack("!BBH", 0, protocol, length)
    return source + destination + struct.pack("!IxxxB", length, protocol)


def _ip_reply(packet: Packet, protocol: int, body: bytes) -> bytes:
    source, destination = _addresses(packet)
    if packet.version == 4:
        header = struct.pack("!BBHHHBBH", 0x45, 0, 20 + len(body), 0, 0, 64, protocol, 0)
        header += source + destination
        header = header[:10] + struct.pack("!H", _checksum(header)) + header[12:]
        return header + body
    return struct.pack("!IHBB", 6 << 28, len(body), protocol, 64) + source + destination + body


def tcp_reset(packet: Packet) -> bytes:
    """RST+ACK for a SYN: acknowledges its sequence number, so the kernel accepts it."""
    segment = struct.pack(
        "!HHIIBBHHH",
        packet.destination_port,
        packet.source_port,
        0,
        (packet.tcp_seq + 1) & 0xFFFFFFFF,
        5 << 4,
        TCP_RST | TCP_ACK,
        0,
        0,
        0,
    )
    checksum = _checksum(_pseudo_header(packet, TCP, len(segment)) + segment)
    segment = segment[:16] + struct.pack("!H", checksum) + segment[18:]
    return _ip_reply(packet, TCP, segment)


def port_unreachable(packet: Packet) -> bytes:
    """ICMP (v4: type 3 code 3; v6: type 1 code 4) quoting the datagram, as a host would."""
    quoted = (packet.header + packet.transport)[: 576 - 48 if packet.version == 4 else 1232]
    if packet.version == 4:
        message = struct.pack("!BBHI", 3, 3, 0, 0) + quoted
        message = message[:2] + struct.pack("!H", _checksum(message)) + message[4:]
        return _ip_reply(packet, ICMP, message)
    message = struct.pack("!BBHI", 1, 4, 0, 0) + quoted
    checksum = _checksum(_pseudo_header(packet, ICMPV6, len(message)) + message)
    message = message[:2] + struct.pack("!H", checksum) + message[4:]
    return _ip_reply(packet, ICMPV6, message)

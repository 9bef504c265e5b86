"""The sink's wire formats without namespaces: the refusals a kernel accepts, the DNS answers."""

from __future__ import annotations

import socket
import struct

from cloudguard.guard.hard import dns, packets


def syn_v4(source: str, destination: str, sport: int, dport: int, seq: int) -> bytes:
    segment = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 5 << 4, packets.TCP_SYN, 64240, 0, 0)
    header = struct.pack("!BBHHHBBH", 0x45, 0, 20 + len(segment), 1, 0, 64, packets.TCP, 0)
    header += socket.inet_aton(source) + socket.inet_aton(destination)
    return header + segment


def test_a_syn_is_answered_by_a_reset_that_acknowledges_it_with_valid_checksums() -> None:
    syn = packets.parse(syn_v4("192.0.0.8", "20.190.128.1", 40000, 443, 0xFFFFFFFF))
    assert syn is not None and syn.is_syn and syn.destination == "20.190.128.1"

    reply = packets.tcp_reset(syn)

    parsed = packets.parse(reply)
    assert parsed is not None
    assert (parsed.source, parsed.destination) == ("20.190.128.1", "192.0.0.8")
    assert (parsed.source_port, parsed.destination_port) == (443, 40000)
    assert parsed.tcp_flags == packets.TCP_RST | packets.TCP_ACK
    assert struct.unpack("!I", parsed.transport[8:12])[0] == 0  # ack = seq + 1, wrapped
    assert packets._checksum(reply[:20]) == 0, "IPv4 header checksum"
    pseudo = reply[12:20] + struct.pack("!BBH", 0, packets.TCP, len(parsed.transport))
    assert packets._checksum(pseudo + parsed.transport) == 0, "TCP checksum"


def icmpv6(kind: int, destination: str, hop_by_hop: bool) -> bytes:
    """An ICMPv6 message as the kernel sends it (MLD reports carry a hop-by-hop header)."""
    body = bytes([kind, 0, 0, 0]) + b"\0" * 4
    extension = bytes([58, 0, 5, 2, 0, 0, 1, 0]) if hop_by_hop else b""  # router alert
    next_header = 0 if hop_by_hop else 58
    header = struct.pack("!IHBB", 6 << 28, len(extension + body), next_header, 1)
    header += socket.inet_pton(socket.AF_INET6, "fe80::1")
    return header + socket.inet_pton(socket.AF_INET6, destination) + extension + body


def udp_v4(destination: str, port: int) -> bytes:
    segment = struct.pack("!HHHH", 40000, port, 9, 0) + b"x"
    header = struct.pack("!BBHHHBBH", 0x45, 0, 20 + len(segment), 1, 0, 1, packets.UDP, 0)
    return header + socket.inet_aton("192.0.0.8") + socket.inet_aton(destination) + segment


def test_the_kernels_chatter_is_noise_by_protocol_and_no_destination_is() -> None:
    mld = packets.parse(icmpv6(143, "ff02::16", hop_by_hop=True))
    solicitation = packets.parse(icmpv6(133, "ff02::2", hop_by_hop=False))
    igmp = packets.parse(syn_v4("192.0.0.8", "224.0.0.22", 0, 0, 0)[:9] + bytes([packets.IGMP])
                         + syn_v4("192.0.0.8", "224.0.0.22", 0, 0, 0)[10:])  # fmt: skip
    multicast = packets.parse(udp_v4("239.1.2.3", 9999))
    mdns = packets.parse(udp_v4("224.0.0.251", 5353))
    imds = packets.parse(syn_v4("192.0.0.8", "169.254.169.254", 40000, 80, 1))

    assert mld is not None and mld.protocol == packets.ICMPV6 and mld.is_kernel_noise()
    assert solicitation is not None and solicitation.is_kernel_noise()
    assert igmp is not None and igmp.is_kernel_noise()
    for packet in (multicast, mdns, imds):  # datagrams and connections, whatever the address
        assert packet is not None and not packet.is_kernel_noise(), packet.destination


def query(name: str, query_type: int) -> bytes:
    labels = b"".join(bytes([len(p)]) + p.encode() for p in name.split("."))
    return (
        struct.pack("!HHHHHH", 0x1234, 0x0100, 1, 0, 0, 1)
        + labels
        + b"\0"
        + struct.pack("!HH", query_type, 1)
    )


def test_each_name_gets_its_own_synthetic_address_and_maps_back() -> None:
    pool = dns.Pool()
    answers = {}
    for name, query_type in (("Vault.Azure.NET", dns.A), ("s3.amazonaws.com", dns.AAAA)):
        parsed = dns.parse_query(query(name, query_type))
        assert parsed is not None
        reply = dns.answer(parsed, pool)
        assert reply[:2] == b"\x12\x34" and struct.unpack("!H", reply[6:8])[0] == 1
        answers[name.lower()] = reply[-(4 if query_type == dns.A else 16) :]

    v4 = socket.inet_ntop(socket.AF_INET, answers["vault.azure.net"])
    v6 = socket.inet_ntop(socket.AF_INET6, answers["s3.amazonaws.com"])
    assert v4.startswith("198.18.") and pool.name_of(v4) == "vault.azure.net"
    assert v6.startswith("2001:2:") and pool.name_of(v6) == "s3.amazonaws.com"
    assert pool.name_of("20.190.128.1") is None


def test_other_query_types_get_an_empty_answer_and_garbage_none() -> None:
    parsed = dns.parse_query(query("example.com", 65))
    assert parsed is not None and parsed.type_name == "HTTPS"
    assert struct.unpack("!H", dns.answer(parsed, dns.Pool())[6:8])[0] == 0
    assert dns.parse_query(b"\x00" * 5) is None

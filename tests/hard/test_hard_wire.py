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


def test_multicast_is_noise_but_the_metadata_service_is_not() -> None:
    imds = packets.parse(syn_v4("192.0.0.8", "169.254.169.254", 40000, 80, 1))
    mdns = packets.parse(syn_v4("192.0.0.8", "224.0.0.251", 5353, 5353, 1))
    assert imds is not None and not imds.is_local_noise()
    assert mdns is not None and mdns.is_local_noise()


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

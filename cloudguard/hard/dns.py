"""The hard seal's resolver: every query answered and named, with a synthetic address per name.

Each name gets the next address of a reserved pool (198.18.0.0/15, RFC 2544
benchmarking, for A; 2001:2::/48, RFC 5180 benchmarking, for AAAA), so the
connection that follows arrives at the sink with a destination that says
which name it was resolved from. Other query types get an empty answer.
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass

A = 1
AAAA = 28
QUERY_TYPE_NAMES = {A: "A", AAAA: "AAAA", 5: "CNAME", 15: "MX", 16: "TXT", 33: "SRV", 65: "HTTPS"}
V4_POOL = ipaddress.IPv4Network("198.18.0.0/15")
V6_POOL = ipaddress.IPv6Network("2001:2::/48")
TTL = 1  # short: a name's address is only meaningful for this run


@dataclass(frozen=True)
class Query:
    ident: int
    flags: int
    name: str
    query_type: int
    question: bytes  # the question section, echoed in the answer

    @property
    def type_name(self) -> str:
        return QUERY_TYPE_NAMES.get(self.query_type, str(self.query_type))


def parse_query(message: bytes) -> Query | None:
    """The first question of a DNS query; None for anything that is not one."""
    if len(message) < 12:
        return None
    ident, flags, questions = struct.unpack("!HHH", message[:6])
    if flags & 0x8000 or questions < 1:
        return None
    labels: list[str] = []
    at = 12
    while at < len(message):
        length = message[at]
        if length == 0 or length & 0xC0:
            break
        labels.append(message[at + 1 : at + 1 + length].decode("ascii", "backslashreplace"))
        at += 1 + length
    if at + 5 > len(message) or message[at] != 0:
        return None
    query_type = struct.unpack("!H", message[at + 1 : at + 3])[0]
    return Query(ident, flags, ".".join(labels).lower(), query_type, message[12 : at + 5])


class Pool:
    """Names to synthetic addresses and back, stable for the life of one seal."""

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self._names: list[str] = []

    def index(self, name: str) -> int:
        if name not in self._index:
            self._names.append(name)
            self._index[name] = len(self._names)
        return self._index[name]

    def address(self, name: str, query_type: int) -> bytes:
        index = self.index(name) % (V4_POOL.num_addresses - 2) or 1
        if query_type == AAAA:
            return (V6_POOL.network_address + index).packed
        return (V4_POOL.network_address + index).packed

    def name_of(self, address: str) -> str | None:
        """The name a synthetic address was handed out for; None for any other address."""
        parsed = ipaddress.ip_address(address)
        if parsed in V4_POOL:
            index = int(parsed) - int(V4_POOL.network_address)
        elif parsed in V6_POOL:
            index = int(parsed) - int(V6_POOL.network_address)
        else:
            return None
        return self._names[index - 1] if 0 < index <= len(self._names) else None


def answer(query: Query, pool: Pool) -> bytes:
    """The response: one A/AAAA record from the pool, or no records for other types."""
    flags = 0x8000 | (query.flags & 0x7900) | 0x0080  # QR, opcode and RD echoed, RA
    records = b""
    if query.query_type in (A, AAAA):
        address = pool.address(query.name, query.query_type)
        records = struct.pack("!HHHIH", 0xC00C, query.query_type, 1, TTL, len(address)) + address
    header = struct.pack("!HHHHHH", query.ident, flags, 1, 1 if records else 0, 0, 0)
    return header + query.question + records

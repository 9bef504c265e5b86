"""The hard seal's resolver: every query answered and named, with a synthetic address per name.

Each name gets the next address of a reserved pool (198.18.0.0/15, RFC 2544
benchmarking, for A; 2001:2::/48, RFC 5180 benchmarking, for AAAA), so the
connection that follows arrives at the sink with a destination that says
which name it was resolved from. Other query types get an empty answer.
"""

from __future__ import annotations

import socket
import struct

A = 1
AAAA = 28
QUERY_TYPE_NAMES = {A: "A", AAAA: "AAAA", 5: "CNAME", 15: "MX", 16: "TXT", 33: "SRV", 65: "HTTPS"}
V4_POOL = int.from_bytes(socket.inet_pton(socket.AF_INET, "198.18.0.0"), "big")  # /15
V6_POOL = int.from_bytes(socket.inet_pton(socket.AF_INET6, "2001:2::"), "big")  # /48
POOL_SIZE = 2**17 - 2  # the v4 pool's usable addresses; the v6 pool is far larger
TTL = 1  # short: a name's address is only meaningful for this run


class Query:
    __slots__ = ("flags", "ident", "name", "query_type", "question")

    def __init__(self, ident: int, flags: int, name: str, query_type: int, question: bytes):
        self.ident, self.flags, self.name, self.query_type = ident, flags, name, query_type
        self.question = question  # the question section, echoed in the answer

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
        index = self.index(name) % POOL_SIZE or POOL_SIZE
        if query_type == AAAA:
            return (V6_POOL + index).to_bytes(16, "big")
        return (V4_POOL + index).to_bytes(4, "big")

    def name_of(self, address: str) -> str | None:
        """The name a synthetic address was handed out for; None for any other address."""
        six = ":" in address
        value = int.from_bytes(socket.inet_pton(socket.AF_INET6 if six else socket.AF_INET,
                                                address), "big")  # fmt: skip
        index = value - (V6_POOL if six else V4_POOL)
        if not 0 < index <= min(len(self._names), POOL_SIZE):
            return None
        return self._names[index - 1]


def is_synthetic(address: str) -> bool:
    """Whether `address` is from the pool's ranges: an answer only the sink gives."""
    six = ":" in address
    family = socket.AF_INET6 if six else socket.AF_INET
    value = int.from_bytes(socket.inet_pton(family, address), "big")
    return value >> 80 == V6_POOL >> 80 if six else value >> 17 == V4_POOL >> 17


def answer(query: Query, pool: Pool) -> bytes:
    """The response: one A/AAAA record from the pool, or no records for other types."""
    flags = 0x8000 | (query.flags & 0x7900) | 0x0080  # QR, opcode and RD echoed, RA
    records = b""
    if query.query_type in (A, AAAA):
        address = pool.address(query.name, query.query_type)
        records = struct.pack("!HHHIH", 0xC00C, query.query_type, 1, TTL, len(address)) + address
    header = struct.pack("!HHHHHH", query.ident, flags, 1, 1 if records else 0, 0, 0)
    return header + query.question + records

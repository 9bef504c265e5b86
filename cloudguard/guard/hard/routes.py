"""Links up, addresses and default routes, set over rtnetlink in the supervisor itself.

What `ip link set ... up`, `ip addr add` and `ip route add default dev`
would do, as a handful of netlink messages: no process to start on the
seal's start-up path (an `ip -batch` cost several milliseconds), and no
iproute2 to require on the host. Stdlib only: each message is a fixed C
struct (linux/rtnetlink.h, linux/if_addr.h) and a few attributes.
"""

from __future__ import annotations

import errno
import os
import socket
import struct

NETLINK_ROUTE = 0
RTM_NEWLINK, RTM_NEWADDR, RTM_NEWROUTE = 16, 20, 24
NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 0x1, 0x4, 0x200, 0x400
NLMSG_ERROR = 2
IFF_UP = 0x1
IFLA_TXQLEN = 13
IFA_ADDRESS, IFA_LOCAL = 1, 2
IFA_F_NODAD = 0x02
RT_TABLE_MAIN, RTPROT_BOOT, RT_SCOPE_LINK, RT_SCOPE_UNIVERSE, RTN_UNICAST = 254, 3, 253, 0, 1
RTA_OIF = 4
_HEADER = struct.Struct("=IHHII")  # nlmsghdr
_IFINFO = struct.Struct("=BxHiII")  # family, type, index, flags, change
_IFADDR = struct.Struct("=BBBBI")  # family, prefix length, flags, scope, index
_RTMSG = struct.Struct(
    "=BBBBBBBBI"
)  # family, dst len, src len, tos, table, protocol, scope, type, flags


def _attribute(kind: int, value: bytes) -> bytes:
    length = 4 + len(value)
    return struct.pack("=HH", length, kind) + value + b"\0" * (-length % 4)


class Routes:
    """One rtnetlink socket; every request acknowledged (OSError naming what was refused)."""

    def __init__(self) -> None:
        self.netlink = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC,
                                     NETLINK_ROUTE)  # fmt: skip
        self.sequence = 0

    def _request(self, kind: int, body: bytes, what: str, flags: int = 0) -> None:
        self.sequence += 1
        header = _HEADER.pack(_HEADER.size + len(body), kind,
                              NLM_F_REQUEST | NLM_F_ACK | flags, self.sequence, 0)  # fmt: skip
        self.netlink.send(header + body)
        reply = self.netlink.recv(65536)
        if _HEADER.unpack_from(reply)[1] == NLMSG_ERROR:
            (error,) = struct.unpack_from("=i", reply, _HEADER.size)
            if error and -error != errno.EEXIST:
                raise OSError(-error, f"{what}: {os.strerror(-error)}")

    def link_up(self, index: int, tx_queue: int | None = None) -> None:
        body = _IFINFO.pack(socket.AF_UNSPEC, 0, index, IFF_UP, IFF_UP)
        if tx_queue is not None:
            body += _attribute(IFLA_TXQLEN, struct.pack("=I", tx_queue))
        self._request(RTM_NEWLINK, body, f"link {index} up")

    def add_address(self, index: int, address: str, prefix: int, *, nodad: bool = False) -> None:
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        raw = socket.inet_pton(family, address)
        body = _IFADDR.pack(family, prefix, IFA_F_NODAD if nodad else 0, 0, index)
        body += _attribute(IFA_LOCAL, raw) + _attribute(IFA_ADDRESS, raw)
        self._request(RTM_NEWADDR, body, f"address {address}", NLM_F_CREATE | NLM_F_EXCL)

    def default_route(self, index: int, family: int) -> None:
        """Every destination of `family` out of the device `index` (no gateway: on link)."""
        body = _RTMSG.pack(family, 0, 0, 0, RT_TABLE_MAIN, RTPROT_BOOT,
                           RT_SCOPE_LINK if family == socket.AF_INET else RT_SCOPE_UNIVERSE,
                           RTN_UNICAST, 0)  # fmt: skip
        body += _attribute(RTA_OIF, struct.pack("=I", index))
        self._request(RTM_NEWROUTE, body, "the default route", NLM_F_CREATE | NLM_F_EXCL)

    def close(self) -> None:
        self.netlink.close()

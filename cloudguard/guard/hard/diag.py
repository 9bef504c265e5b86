"""Sockets of the seal's network namespace, through sock_diag (netlink).

- `SocketTable.inode`: the inode of one TCP/UDP socket by its addresses, in
  O(1). /proc/net/tcp walks the kernel's whole connection table (shared by
  every namespace on the host: milliseconds per read on a busy host); a
  SOCK_DIAG_BY_FAMILY request for one exact address pair is a hash lookup.
- `bound_unix_sockets`: the files of every unix socket bound in this network
  namespace. A unix socket file crosses network namespaces (its inode is
  all a connect needs); the sockets bound by processes inside the seal are
  exactly the ones this dump lists, a host daemon's never are.

Stdlib only: requests and replies are fixed C structs (linux/inet_diag.h,
linux/unix_diag.h).
"""

from __future__ import annotations

import socket
import struct

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST = 0x1
NLMSG_ERROR = 2
NO_COOKIE = 0xFFFFFFFF
ALL_STATES = 0xFFFFFFFF
_HEADER = struct.Struct("=IHHII")  # nlmsghdr: length, type, flags, seq, pid
_REQUEST = struct.Struct("=BBBxI")  # inet_diag_req_v2: family, protocol, ext, pad, states
_ID = struct.Struct("!HH16s16s")  # inet_diag_sockid: sport, dport, src, dst (network order)
_ID_TAIL = struct.Struct("=III")  # ...if, cookie[2]
_REPLY_INODE_AT = _HEADER.size + 4 + _ID.size + _ID_TAIL.size + 4 * 4  # after expires..uid
NLM_F_DUMP = 0x300
NLMSG_DONE = 3
UDIAG_SHOW_VFS = 0x2
UNIX_DIAG_VFS = 1
_UNIX_REQUEST = struct.Struct("=BBHIIIII")  # family, protocol, pad, states, ino, show, cookie[2]
_UNIX_MESSAGE = 16  # unix_diag_msg: family, type, state, pad, ino, cookie[2]
_ATTRIBUTE = struct.Struct("=HH")


def _packed(address: str) -> bytes:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    return socket.inet_pton(family, address).ljust(16, b"\0")


class SocketTable:
    """One netlink socket, reused for every lookup of one sink."""

    def __init__(self) -> None:
        self.netlink = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG)
        self.sequence = 0

    def inode(self, protocol: int, local: tuple[str, int], remote: tuple[str, int]) -> int | None:
        """The inode of the socket local -> remote (`protocol` 6 or 17); None if there is none."""
        family = socket.AF_INET6 if ":" in local[0] else socket.AF_INET
        if protocol == socket.IPPROTO_UDP:
            # udp_dump_one looks up as for a packet arriving: "src" is the remote end.
            local, remote = remote, local
        sockid = _ID.pack(local[1], remote[1], _packed(local[0]), _packed(remote[0]))
        body = _REQUEST.pack(family, protocol, 0, ALL_STATES) + sockid
        body += _ID_TAIL.pack(0, NO_COOKIE, NO_COOKIE)
        self.sequence += 1
        header = _HEADER.pack(_HEADER.size + len(body), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST,
                              self.sequence, 0)  # fmt: skip
        try:
            self.netlink.send(header + body)
            reply = self.netlink.recv(65536)
        except OSError:
            return None
        if len(reply) < _REPLY_INODE_AT + 4:
            return None
        kind = _HEADER.unpack_from(reply)[1]
        if kind == NLMSG_ERROR:
            return None
        inode: int = struct.unpack_from("=I", reply, _REPLY_INODE_AT)[0]
        return inode or None

    def close(self) -> None:
        self.netlink.close()


def bound_unix_sockets() -> set[tuple[int, int, int]]:
    """(major, minor, inode) of the file of every unix socket bound in this network namespace."""
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG) as netlink:
        body = _UNIX_REQUEST.pack(
            socket.AF_UNIX, 0, 0, ALL_STATES, 0, UDIAG_SHOW_VFS, NO_COOKIE, NO_COOKIE
        )
        header = _HEADER.pack(
            _HEADER.size + len(body), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, 1, 0
        )
        netlink.send(header + body)
        found: set[tuple[int, int, int]] = set()
        while True:
            reply = netlink.recv(1 << 16)
            at = 0
            while at + _HEADER.size <= len(reply):
                length, kind = _HEADER.unpack_from(reply, at)[:2]
                if kind in (NLMSG_DONE, NLMSG_ERROR) or length < _HEADER.size:
                    return found
                _vfs_attribute(reply, at + _HEADER.size + _UNIX_MESSAGE, at + length, found)
                at += (length + 3) & ~3


def _vfs_attribute(reply: bytes, at: int, end: int, found: set[tuple[int, int, int]]) -> None:
    while at + _ATTRIBUTE.size <= end:
        length, kind = _ATTRIBUTE.unpack_from(reply, at)
        if length < _ATTRIBUTE.size:
            return
        if kind == UNIX_DIAG_VFS:
            inode, device = struct.unpack_from("=II", reply, at + _ATTRIBUTE.size)
            found.add((device >> 20, device & 0xFFFFF, inode))  # the kernel's dev_t encoding
        at += (length + 3) & ~3

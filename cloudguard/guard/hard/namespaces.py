"""The supervisor's namespaces and the one way out of them: the TUN device `cg0`.

New user (root mapped to the invoking user), network and mount namespaces;
inside, loopback and `cg0` as the default route for IPv4 and IPv6. `cg0`'s
queue is raised (`TX_QUEUE`): a burst waits there while the sink records
the packets before it, and what still overflows is counted by the kernel
(`tx_dropped`), which the sink reports (`Sink.dropped`): never lost silently.
"""

from __future__ import annotations

import os
import socket
import struct

from cloudguard.guard.hard import linux

TUN_NAME = "cg0"
TUNSETIFF = 0x400454CA
TUNSETPERSIST = 0x400454CB
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
# The TUN's own addresses: the IPv4 dummy address (RFC 7600) and one from the IPv6
# discard-only prefix (RFC 6666); neither is a destination anything needs to reach.
TUN_SOURCE_V4 = ("192.0.0.8", 32)
TUN_SOURCE_V6 = ("100::8", 128)
# Packets cg0 holds for the sink (the kernel's default is 500). At most this many packets of
# at most the MTU wait in the kernel, about 100 MB at worst, only while the command floods.
TX_QUEUE = 65536


class SetupError(Exception):
    """The seal could not be made; the message is the one-line cause."""


def enter(uid: int, gid: int) -> None:
    try:
        linux.unshare(linux.CLONE_NEWUSER | linux.CLONE_NEWNET | linux.CLONE_NEWNS)
    except OSError as error:
        raise SetupError(
            f"unshare(user, net, mount) was refused ({error.strerror}): unprivileged user "
            "namespaces are blocked here (a container needs seccomp/AppArmor to allow "
            "`unshare`, e.g. docker --security-opt seccomp=unconfined)"
        ) from None
    linux.set_dumpable(True)  # its own /proc files: the id maps are written there
    linux.map_single_ids(0, uid, 0, gid)
    # Nothing mounted here may propagate back to the host.
    linux.mount(None, "/", None, linux.MS_REC | linux.MS_PRIVATE)


def ipv6_enabled() -> bool:
    try:
        with open("/proc/sys/net/ipv6/conf/default/disable_ipv6") as handle:
            return handle.read().strip() == "0"
    except OSError:
        return False  # a kernel built without IPv6


def make_tun() -> int:
    try:
        tun = os.open("/dev/net/tun", os.O_RDWR | os.O_CLOEXEC)
    except OSError as error:
        raise SetupError(
            f"cannot open /dev/net/tun ({error.strerror}): load the tun module "
            "(`modprobe tun`) or pass the device to the container (`--device /dev/net/tun`)"
        ) from None
    import fcntl

    try:
        fcntl.ioctl(tun, TUNSETIFF, struct.pack("16sH", TUN_NAME.encode(), IFF_TUN | IFF_NO_PI))
        # Persistent: closing it at the end does not wait for the device's removal (an RCU
        # grace period, milliseconds); it goes with the namespace, after the run.
        fcntl.ioctl(tun, TUNSETPERSIST, 1)
    except OSError as error:
        raise SetupError(
            f"/dev/net/tun refused to make a TUN device ({error.strerror}): it is not the "
            "kernel's tun driver, or the container withholds it (`--device /dev/net/tun`)"
        ) from None
    from cloudguard.guard.hard.routes import Routes

    routes = Routes()
    try:
        index = socket.if_nametoindex(TUN_NAME)
        routes.link_up(socket.if_nametoindex("lo"))
        routes.link_up(index, tx_queue=TX_QUEUE)
        routes.add_address(index, *TUN_SOURCE_V4)
        routes.default_route(index, socket.AF_INET)
        if ipv6_enabled():  # where IPv6 is off, no IPv6 packet can leave either
            routes.add_address(index, *TUN_SOURCE_V6, nodad=True)
            routes.default_route(index, socket.AF_INET6)
    except OSError as error:
        raise SetupError(f"the namespace could not be routed through the sink ({error})") from None
    finally:
        routes.close()
    return tun


def tx_dropped() -> int:
    """Packets cg0's queue dropped (its `tx_dropped`), from this namespace's /proc/net/dev."""
    with open("/proc/self/net/dev") as handle:
        for line in handle:
            name, _, counters = line.partition(":")
            if name.strip() == TUN_NAME:
                return int(counters.split()[11])  # transmit: bytes packets errs drop ...
    return 0

"""Can the hard seal be made on this host? Facts read from the system, each with its fix.

Read at the start of every `run --hard` and by `cloudguard doctor`. These
are facts about the host (kernel switches, tools, the TUN device), not a
trial run: the supervisor still fails closed, naming the system call that
was refused, when a fact here was not the whole story (a container without
the capability, a seccomp filter).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

TUN_DEVICE = "/dev/net/tun"
SECCOMP_ACTIONS = "/proc/sys/kernel/seccomp/actions_avail"
# The gate needs seccomp user notification (5.0), SECCOMP_USER_NOTIF_FLAG_CONTINUE (5.5),
# pidfd_getfd and openat2 (5.6).
GATE_KERNEL = (5, 6)
# What a host without the gate cannot enforce: named on the seal line (`limits=`).
GATE_LIMITS = "unix-sockets,socket-families"


def _sysctl(name: str) -> str | None:
    try:
        return Path("/proc/sys", *name.split(".")).read_text().strip()
    except OSError:
        return None


def missing() -> str | None:
    """Why the hard seal cannot be made here (cause and how to enable it); None when it can."""
    if not sys.platform.startswith("linux"):
        return (
            f"needs Linux namespaces; this is {sys.platform}: run the suite in a Linux "
            "container or VM (`cloudguard run` without --hard seals the environment only)"
        )
    if _sysctl("user.max_user_namespaces") == "0":
        return (
            "user namespaces are disabled (user.max_user_namespaces=0): "
            "enable with `sysctl -w user.max_user_namespaces=15000`"
        )
    if os.geteuid() != 0 and _sysctl("kernel.unprivileged_userns_clone") == "0":
        return (
            "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0): "
            "enable with `sysctl -w kernel.unprivileged_userns_clone=1`"
        )
    if os.geteuid() != 0 and _sysctl("kernel.apparmor_restrict_unprivileged_userns") == "1":
        return (
            "AppArmor restricts unprivileged user namespaces "
            "(kernel.apparmor_restrict_unprivileged_userns=1): allow them with "
            "`sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` or an AppArmor profile "
            "granting `userns` to the Python interpreter"
        )
    if not os.path.exists(TUN_DEVICE):
        return (
            f"{TUN_DEVICE} does not exist: load the tun module (`modprobe tun`), or in a "
            "container pass the device (`--device /dev/net/tun`)"
        )
    return None


def _kernel() -> tuple[int, int]:
    release = os.uname().release.split("-")[0].split(".")
    try:
        return int(release[0]), int(release[1])
    except (IndexError, ValueError):
        return (0, 0)


def gate_missing() -> str | None:
    """Why this host cannot run the hard seal's gate (unix sockets, socket families): a
    limit the seal line declares. None when it can."""
    from cloudguard.guard.hard import seccomp_filter

    if seccomp_filter.native() is None:
        return f"the gate knows no seccomp system call numbers for {os.uname().machine}"
    try:
        actions = Path(SECCOMP_ACTIONS).read_text().split()
    except OSError:
        actions = []
    if "user_notif" not in actions:
        return f"the kernel offers no seccomp user notification ({SECCOMP_ACTIONS})"
    if _kernel() < GATE_KERNEL:
        needed = ".".join(map(str, GATE_KERNEL))
        return f"Linux {needed} or later is needed (this is {os.uname().release})"
    return None

"""Can the hard seal be made on this host? Facts read from the system, each with its fix.

Read at the start of every `run --hard` and by `cloudguard doctor`. These
are facts about the host (kernel switches, tools, the TUN device), not a
trial run: the supervisor still fails closed, naming the system call that
was refused, when a fact here was not the whole story (a container without
the capability, a seccomp filter).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

TUN_DEVICE = "/dev/net/tun"
TOOLS = {"ip": "iproute2 (Debian/Ubuntu: apt-get install iproute2)"}


def _sysctl(name: str) -> str | None:
    try:
        return Path("/proc/sys", *name.split(".")).read_text().strip()
    except OSError:
        return None


def missing(path: str | None = None) -> str | None:
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
    for tool, package in TOOLS.items():
        if shutil.which(tool, path=path) is None:
            return f"`{tool}` is not on PATH: install {package}"
    return None

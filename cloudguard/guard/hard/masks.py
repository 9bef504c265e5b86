"""Credential homes masked inside the mount namespace: empty, read-only, the real ones untouched.

The list lives in the registry's `[hard.masked_homes]` (one reason per
entry). A directory is covered by an empty read-only tmpfs, a file by a
read-only bind of an empty file; a home that does not exist is left alone
(there is nothing in it to read, and creating it would change the host).
The mounts are made before the command starts, in a user namespace the
command is not root of, so it cannot unmount them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

# Where a resolver outside the namespace could be asked over a unix socket (systemd-resolved's
# varlink/D-Bus socket, nscd): masked like a credential home so every lookup meets the sink.
RESOLVER_SOCKET_DIRS = ("/run/systemd/resolve", "/run/nscd", "/var/run/nscd")


def expand(homes: Iterable[str], home: str) -> list[str]:
    """Registry entries (`~/.aws`) as absolute paths under the invoking user's HOME."""
    return [os.path.join(home, entry.removeprefix("~/")) for entry in homes]


def mask(path: str, empty_file: str) -> bool:
    """Cover `path` with an empty read-only view. False when there is nothing at `path`."""
    from cloudguard.guard.hard import linux  # ctypes: inside the supervisor only, never on the host

    if os.path.isdir(path):
        flags = linux.MS_RDONLY | linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC
        linux.mount("cloudguard-mask", path, "tmpfs", flags, "size=4k,mode=0555")
        return True
    if os.path.exists(path):
        linux.mount(empty_file, path, None, linux.MS_BIND)
        # A bind's read-only remount must keep the flags the kernel locked on the source mount.
        locked = os.statvfs(empty_file).f_flag & (
            linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC
        )
        linux.mount(None, path, None, linux.MS_REMOUNT | linux.MS_BIND | linux.MS_RDONLY | locked)
        return True
    return False

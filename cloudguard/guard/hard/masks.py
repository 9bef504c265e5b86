"""What the hard seal hides or freezes inside its mount namespace: one declared list of paths.

Each entry is a path, how it appears inside, and why:

- `EMPTY`: an empty read-only view (a directory is covered by an empty
  read-only tmpfs, a file or socket by a read-only bind of an empty file): the
  credential homes of the registry's `[hard.masked_homes]` (under both $HOME
  and the account's home), the sockets of a resolver outside the seal (so
  every lookup meets the sink), and the host's well-known daemon sockets (a
  unix socket file crosses network namespaces: each is a door past the sink);
- `READ_ONLY`: the real thing, read-only: what the command could write now
  that would run a program later, outside the seal (the repository's git
  hooks and config).

The real paths are never touched; a path that does not exist is left alone.
The mounts are made before the command starts, in a user namespace the
command is not root of, so it cannot unmount them. Their sources (the empty
file, the seal's resolv.conf) live on a tmpfs that is detached once every
mount is made: nothing inside can reach them, let alone write them. A
working directory at or under an `EMPTY` path would keep the real directory
open beneath the mask: the run stops there (75) naming it.

To hide or freeze more (issue 26's read-only roots, say), add entries:
`plan` gathers them, `apply` mounts them.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Iterable, Mapping, Sequence

EMPTY = "empty"
READ_ONLY = "read-only"
RESOLVER = "a resolver outside the seal answers lookups there, past the sink"
# The host's well-known daemon sockets: masked (not only recorded) so a run is not red for a
# daemon the suite merely found, and so hosts whose kernel has no gate (seccomp user
# notification) still have these doors shut.
HOST_SOCKETS: tuple[tuple[str, str], ...] = (
    ("/run/systemd/resolve", f"systemd-resolved: {RESOLVER} (nss-resolve, varlink)"),
    ("/run/nscd", f"nscd: {RESOLVER}"),
    ("/var/run/nscd", f"nscd: {RESOLVER}"),
    ("/run/avahi-daemon", "avahi: mDNS lookups (nss-mdns) on the host's network"),
    ("/run/dbus", "the system D-Bus: systemd (transient units), resolved, NetworkManager"),
    ("/run/docker.sock", "Docker: `docker run --network host` runs anything outside"),
    ("/var/run/docker.sock", "Docker: `docker run --network host` runs anything outside"),
    ("/run/podman", "Podman's API (rootful)"),
    ("/run/containerd", "containerd"),
    ("/run/crio", "CRI-O"),
    ("/run/buildkit", "BuildKit"),
    ("/run/snapd.socket", "snapd's API"),
    ("/run/snapd-snap.socket", "snapd's API"),
    ("/tmp/.X11-unix", "the X server: input to any window, a browser on the host"),
    ("/run/systemd/journal", "the host's journal (syslog()): no reach, but outside the seal"),
    ("/dev/log", "the host's syslog: no reach, but outside the seal"),
    ("/run/systemd/userdb", "user lookups (nss-systemd): no reach, but outside the seal"),
)
SESSION = "the user's session: its D-Bus (systemd-run --user), rootless Docker/Podman, agents"
AGENT = "an SSH agent: the user's keys, for any host"
# Directories too broad to mask whole for one socket in them: the socket alone is masked.
SHARED_DIRECTORIES = ("/", "/tmp", "/var/tmp", "/dev/shm", "/run", "/var/run")


class Entry:
    __slots__ = ("kind", "path", "reason")

    def __init__(self, path: str, kind: str, reason: str) -> None:
        self.path, self.kind, self.reason = path, kind, reason

    def __repr__(self) -> str:
        return f"Entry({self.path!r}, {self.kind!r}, {self.reason!r})"


class MaskError(Exception):
    """A mask cannot hold (a working directory beneath it); the message names it."""


def account_home(uid: int) -> str | None:
    try:
        return pwd.getpwuid(uid).pw_dir
    except KeyError:
        return None


def plan(
    *,
    credential_homes: Iterable[str],
    environ: Mapping[str, str],
    uid: int,
    cwd: str,
    temp_dir: str,
) -> list[Entry]:
    """Every entry for this run: the registry's homes, the host's sockets, the repository's
    hooks. Paths as named here; `apply` resolves them and skips what does not exist."""
    homes = list(dict.fromkeys(h for h in (environ.get("HOME"), account_home(uid)) if h))
    entries = [
        Entry(os.path.join(home, name.removeprefix("~/")), EMPTY, "a credential home")
        for name in credential_homes
        for home in homes
    ]
    entries += [Entry(path, EMPTY, reason) for path, reason in HOST_SOCKETS]
    for runtime in dict.fromkeys((environ.get("XDG_RUNTIME_DIR"), f"/run/user/{uid}")):
        if runtime:
            entries.append(Entry(runtime, EMPTY, SESSION))
    entries += _named_sockets(environ, homes, cwd, temp_dir)
    entries += [Entry(path, READ_ONLY, why) for path, why in repository_hooks(cwd)]
    return entries


def _named_sockets(
    environ: Mapping[str, str], homes: Sequence[str], cwd: str, temp_dir: str
) -> list[Entry]:
    """The sockets the operator's environment names: the SSH agent's (its directory, unless
    that is shared), DOCKER_HOST's and CONTAINER_HOST's, Docker Desktop's."""
    entries = [
        Entry(os.path.join(home, ".docker", "run"), EMPTY, "Docker Desktop") for home in homes
    ]
    for variable in ("DOCKER_HOST", "CONTAINER_HOST"):
        value = environ.get(variable, "")
        if value.startswith("unix://"):
            entries.append(Entry(value.removeprefix("unix://"), EMPTY, f"{variable}'s daemon"))
    agent = environ.get("SSH_AUTH_SOCK")
    if agent:
        directory = os.path.dirname(os.path.abspath(agent))
        shared = (*SHARED_DIRECTORIES, temp_dir, *homes)
        broad = directory in shared or _within(cwd, directory) or _within(temp_dir, directory)
        entries.append(Entry(agent if broad else directory, EMPTY, AGENT))
    return entries


def repository_hooks(cwd: str) -> list[tuple[str, str]]:
    """The git hooks and config of the repository `cwd` is in: written inside, they would run
    later outside (a hook on the next commit, `core.hooksPath`, `core.fsmonitor`)."""
    directory = cwd
    while True:
        dot_git = os.path.join(directory, ".git")
        if os.path.lexists(dot_git):
            break
        parent = os.path.dirname(directory)
        if parent == directory:
            return []
        directory = parent
    git_dir = _git_dir(dot_git)
    common = _common_dir(git_dir)
    why = "a git hook or setting written inside would run later, outside the seal"
    paths = dict.fromkeys(
        (
            os.path.join(common, "hooks"),
            os.path.join(common, "config"),
            os.path.join(git_dir, "config.worktree"),
        )
    )
    return [(path, why) for path in paths]


def _git_dir(dot_git: str) -> str:
    if os.path.isdir(dot_git):
        return dot_git
    try:  # a worktree or submodule: "gitdir: PATH"
        with open(dot_git, encoding="utf-8", errors="replace") as handle:
            text = handle.read().strip()
    except OSError:
        return dot_git
    target = text.removeprefix("gitdir:").strip()
    return os.path.normpath(os.path.join(os.path.dirname(dot_git), target))


def _common_dir(git_dir: str) -> str:
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
            return os.path.normpath(os.path.join(git_dir, handle.read().strip()))
    except OSError:
        return git_dir


def _within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


# -- inside the supervisor's mount namespace ---------------------------------------------------


class Sources:
    """The files mounts are made from, on a private tmpfs detached once they are made."""

    def __init__(self, directory: str, resolv_conf: str) -> None:
        from cloudguard.guard.hard import linux

        linux.mount(
            "cloudguard-sources",
            directory,
            "tmpfs",
            linux.MS_NOSUID | linux.MS_NODEV,
            "size=16k,mode=0700",
        )
        self.directory = directory
        self.empty = os.path.join(directory, "empty")
        self.resolv_conf = os.path.join(directory, "resolv.conf")
        for path, text in ((self.empty, ""), (self.resolv_conf, resolv_conf)):
            with open(path, "w") as handle:
                handle.write(text)
            os.chmod(path, 0o444)

    def detach(self) -> None:
        from cloudguard.guard.hard import linux

        linux.detach(self.directory)
        os.rmdir(self.directory)  # the empty directory left on the host's /tmp


def apply(entries: Sequence[Entry], empty_file: str, holes: Mapping[str, str]) -> list[Entry]:
    """Mount every entry whose path exists; the ones applied, with their real paths.

    `holes`: files to show inside an `EMPTY` directory all the same (target -> source), each
    bound in before the mask turns read-only (the seal's resolv.conf where /etc/resolv.conf's
    link ends, an --allow-unix socket); a hole outside every mask is bound over its target.
    """
    from cloudguard.guard.hard import linux

    pins = {target: os.open(source, os.O_PATH | os.O_CLOEXEC) for target, source in holes.items()}
    try:
        applied: list[Entry] = []
        for entry in _resolved(entries):
            if entry.kind == READ_ONLY:
                linux.mount(entry.path, entry.path, None, linux.MS_BIND | linux.MS_REC)
                _read_only(entry.path)
            elif os.path.isdir(entry.path):
                _empty_directory(
                    entry.path, {t: p for t, p in pins.items() if _within(t, entry.path)}
                )
            else:
                linux.mount(empty_file, entry.path, None, linux.MS_BIND)
                _read_only(entry.path)
            applied.append(entry)
        for target, pin in pins.items():
            if not any(e.kind == EMPTY and _within(target, e.path) for e in applied):
                linux.mount(f"/proc/self/fd/{pin}", target, None, linux.MS_BIND)
                _read_only(target)
        return applied
    finally:
        for pin in pins.values():
            os.close(pin)


def _resolved(entries: Sequence[Entry]) -> list[Entry]:
    """Real paths, existing only, one entry per path; none inside an `EMPTY` directory already
    covered (its mask hides it); read-only entries after the masks."""
    real: dict[str, Entry] = {}
    for entry in entries:
        if os.path.lexists(entry.path):
            path = os.path.realpath(entry.path)
            if os.path.exists(path):
                real.setdefault(path, Entry(path, entry.kind, entry.reason))
    masked = [p for p, e in real.items() if e.kind == EMPTY and os.path.isdir(p)]
    kept = [e for p, e in sorted(real.items()) if not any(_within(p, d) and p != d for d in masked)]
    return sorted(kept, key=lambda e: e.kind == READ_ONLY)


def _empty_directory(path: str, holes: Mapping[str, int]) -> None:
    from cloudguard.guard.hard import linux

    flags = linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC
    linux.mount("cloudguard-mask", path, "tmpfs", flags, "size=16k,mode=0755")
    for placeholder, pin in holes.items():  # the mask is still writable: made here, then bound
        os.makedirs(os.path.dirname(placeholder), exist_ok=True)
        if os.path.isdir(f"/proc/self/fd/{pin}"):
            os.makedirs(placeholder, exist_ok=True)
        else:
            os.close(os.open(placeholder, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o444))
        linux.mount(f"/proc/self/fd/{pin}", placeholder, None, linux.MS_BIND)
        _read_only(placeholder)
    linux.mount(None, path, None, linux.MS_REMOUNT | flags | linux.MS_RDONLY)


# statvfs flag -> mount flag, for the flags a user namespace may not change on a bind it remounts
_LOCKED = {0x2: 0x2, 0x4: 0x4, 0x8: 0x8, 0x400: 0x400, 0x800: 0x800, 0x1000: 1 << 21}
MS_STRICTATIME = 1 << 24


def _read_only(path: str) -> None:
    """Remount the bind at `path` read-only, keeping the flags the kernel locked on its source
    (nosuid, nodev, noexec and the atime mode, which an unprivileged remount may not change)."""
    from cloudguard.guard.hard import linux

    current = os.statvfs(path).f_flag
    locked = 0
    for statvfs_flag, mount_flag in _LOCKED.items():
        if current & statvfs_flag:
            locked |= mount_flag
    if not current & (0x400 | 0x1000):  # neither noatime nor relatime: strictatime
        locked |= MS_STRICTATIME
    linux.mount(None, path, None, linux.MS_REMOUNT | linux.MS_BIND | linux.MS_RDONLY | locked)


def check_working_directory(cwd: str, applied: Sequence[Entry], temp_dir: str) -> None:
    """A directory the run needs must not be under an `EMPTY` mask."""
    for entry in applied:
        if entry.kind != EMPTY:
            continue
        for what, path in (("working directory", cwd), ("temporary directory", temp_dir)):
            if _within(os.path.realpath(path), entry.path):
                raise MaskError(
                    f"the {what} {path} is inside {entry.path}, which the hard seal masks "
                    f"({entry.reason}): run from another directory"
                    + (" (or set TMPDIR elsewhere)" if what.startswith("temporary") else "")
                )

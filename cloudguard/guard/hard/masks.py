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
  hooks and config), and every ambient root a run must leave as it found it
  (the registry's `[ambient.roots]`: a write there is refused, EROFS, and the
  gate records it, `cloudguard.guard.hard.writes`);
- `WRITABLE`: a declared output inside a read-only root, writable again;
- `LAYER`: a home, whole, as an overlay whose upper layer is a tmpfs the seal
  owns: the command reads the real files and writes (a cache, a config) land
  in the layer, thrown away when the run ends; the real home never changes;
- `REAL`: what the run may write for real inside a layered home (the
  checkout's working tree, the temporary directory): bound back from the
  real directory, pinned before the layer covered it.

Layers and real binds come first (outermost first), then the masks, the
read-only places, the writable outputs; last, every other mount is made
read-only (`freeze_the_rest`), what the run may write bound on itself first.
Beside the homes' layer, read-only: the checkout's whole git metadata, the interpreter's prefix and
site-packages and cloudguard's own package (code cloudguard or the operator
runs after the command), the CI runner's files named by its variables
(`CI_FILES`: the job's next steps read them). `EMPTY` too: the files and
directories named by the sealed variables of the operator's environment
(`GOOGLE_APPLICATION_CREDENTIALS`, `AWS_SHARED_CREDENTIALS_FILE`, ...), and
where every link inside a masked credential home points (a stow layout:
`~/.aws/credentials -> ~/dotfiles/aws/credentials`).

The real paths are never touched; a path that does not exist is left alone.
The mounts are made before the command starts, in a user namespace the
command is not root of, so it cannot unmount them. Their sources (the empty
file, the seal's resolv.conf) live on a tmpfs that is detached once every
mount is made: nothing inside can reach them, let alone write them. A
working directory at or under an `EMPTY` path would keep the real directory
open beneath the mask: the run stops there (75) naming it.

To hide or freeze more, add entries: `plan` gathers them, `apply` mounts them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pwd
import re
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence

EMPTY = "empty"
READ_ONLY = "read-only"
WRITABLE = "writable"
LAYER = "layer"
REAL = "real"
AMBIENT_ROOT = "an ambient root: a run leaves it as it found it"
OUTPUT = "a declared output inside an ambient root"
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
HOME_LAYER = "a home: what the run writes there lands in a layer thrown away after it"
CHECKOUT = "the checkout's working tree: the run writes it for real"
TEMPORARY = "the temporary directory: the run writes it for real"
GIT_METADATA = "the checkout's git metadata: a hook, config or filter written there runs later"
INSTALLATION = "the interpreter's installation: what cloudguard or the operator runs after the run"
LINK_TARGET = "where a link inside a credential home points"
# The files CI runners name in a job's environment and read after the step: a line written
# there runs in the job's next steps, with the job's tokens (all read-only inside).
CI_FILES: tuple[tuple[str, str], ...] = (
    ("GITHUB_ENV", "GitHub Actions: its lines become the next steps' environment (BASH_ENV=)"),
    ("GITHUB_PATH", "GitHub Actions: its lines go first on the next steps' PATH"),
    ("GITHUB_OUTPUT", "GitHub Actions: step outputs, interpolated into later steps' scripts"),
    ("GITHUB_STATE", "GitHub Actions: the state an action's post step reads"),
    ("GITHUB_STEP_SUMMARY", "GitHub Actions: the job summary others read as the job's own"),
    ("BASH_ENV", "a file bash sources at start (CircleCI's: every later step sources it)"),
    ("ENV", "a file sh sources at start (interactive shells)"),
    ("BUILDKITE_ENV_FILE", "Buildkite: the job's environment, read by the agent's hooks"),
)
# The budget of the walk through the masked homes for links (a home of a dotfiles manager
# holds a few dozen; a walk never stalls the start on a huge tree).
LINK_WALK_LIMIT = 10000
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
    ambient_roots: Iterable[str] = (),
    outputs: Iterable[str] = (),
    sealed: Callable[[str], bool] = lambda name: False,
    installation: Iterable[str] = (),
) -> list[Entry]:
    """Every entry for this run: the homes' layers and what is written for real inside them,
    the registry's credential homes and where their links point, the files the sealed
    variables name, the host's sockets, the repository's metadata, the installation, the CI
    runner's files, the ambient roots and the outputs inside them. Paths as named here;
    `apply` resolves them and skips what does not exist. `sealed`: whether the seal drops a
    variable (`Registry.covers`)."""
    homes = list(dict.fromkeys(h for h in (environ.get("HOME"), account_home(uid)) if h))
    kept = (cwd, temp_dir, *homes)  # never masked or frozen whole: the run needs them
    entries = layers(homes, cwd, temp_dir)
    credential = [
        Entry(os.path.join(home, name.removeprefix("~/")), EMPTY, "a credential home")
        for name in credential_homes
        for home in homes
    ]
    entries += credential
    entries += link_targets([entry.path for entry in credential], kept)
    entries += named_by_sealed_variables(environ, sealed, cwd, kept)
    entries += [Entry(path, EMPTY, reason) for path, reason in HOST_SOCKETS]
    for runtime in dict.fromkeys((environ.get("XDG_RUNTIME_DIR"), f"/run/user/{uid}")):
        if runtime:
            entries.append(Entry(runtime, EMPTY, SESSION))
    entries += _named_sockets(environ, homes, cwd, temp_dir)
    entries += [Entry(path, READ_ONLY, why) for path, why in repository_hooks(cwd)]
    entries += [Entry(path, READ_ONLY, GIT_METADATA) for path in git_metadata(cwd)]
    entries += [
        Entry(path, READ_ONLY, INSTALLATION) for path in installation if _narrow(path, kept)
    ]
    entries += ci_files(environ, kept)
    entries += [Entry(path, READ_ONLY, AMBIENT_ROOT) for path in ambient_roots]
    entries += [Entry(path, WRITABLE, OUTPUT) for path in outputs]
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


def layers(homes: Sequence[str], cwd: str, temp_dir: str) -> list[Entry]:
    """A layer over each home (outermost only), and the checkout and the temporary
    directory bound back real where a layer covers them. A home that is a shared directory
    (`/`, `/tmp`) or the checkout itself gets no layer: the run writes it for real. A
    repository at or above a home (dotfiles kept in git at `~`) is no checkout of the run's:
    there the working directory is what is written for real."""
    checkout = os.path.realpath(checkout_top(cwd))
    if any(_within(os.path.realpath(home), checkout) for home in homes):
        checkout = os.path.realpath(cwd)
    real_temp = os.path.realpath(temp_dir)
    layered: list[str] = []
    for home in homes:
        real = os.path.realpath(home)
        if not os.path.isdir(real) or real in SHARED_DIRECTORIES or real == checkout:
            continue
        if any(_within(real, other) for other in layered):
            continue
        layered = [other for other in layered if not _within(other, real)]
        layered.append(real)
    entries = [Entry(home, LAYER, HOME_LAYER) for home in layered]
    for path, why in ((checkout, CHECKOUT), (real_temp, TEMPORARY)):
        if any(_within(path, home) and path != home for home in layered):
            entries.append(Entry(path, REAL, why))
    return entries


def checkout_top(cwd: str) -> str:
    """The working tree `cwd` is in (where its `.git` is), or `cwd` outside a repository."""
    directory = cwd
    while not os.path.lexists(os.path.join(directory, ".git")):
        parent = os.path.dirname(directory)
        if parent == directory:
            return cwd
        directory = parent
    return directory


def git_metadata(cwd: str) -> list[str]:
    """The git directories of the repository `cwd` is in, whole (a worktree's and the common
    one): whatever the command writes there (a hook, a config, an attribute or exclude file,
    a `.git` indirection's target) git would read later, outside the seal."""
    return list(dict.fromkeys(git_directories(cwd) or ()))


def git_directories(cwd: str) -> tuple[str, str] | None:
    """The git directory of the repository `cwd` is in and its common one (they differ in a
    worktree); None outside a repository. The one place that finds them: the hooks and the
    whole metadata alike."""
    directory = cwd
    while True:
        dot_git = os.path.join(directory, ".git")
        if os.path.lexists(dot_git):
            break
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent
    git_dir = _git_dir(dot_git)
    return git_dir, _common_dir(git_dir)


def installation() -> list[str]:
    """This interpreter's installation and cloudguard's own: its prefixes, its site-packages
    (the user's too) and cloudguard's package directory. A `.pth` or a bytecode file planted
    there would run in cloudguard's next import, outside the seal."""
    import site
    import sys
    import sysconfig

    import cloudguard

    paths = [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]
    paths += [sysconfig.get_paths()[key] for key in ("purelib", "platlib", "stdlib")]
    paths += site.getsitepackages()
    user_site = site.getusersitepackages()
    if user_site:
        paths.append(user_site)
    paths.append(os.path.dirname(os.path.abspath(cloudguard.__file__)))
    return list(dict.fromkeys(os.path.abspath(p) for p in paths))


def ci_files(environ: Mapping[str, str], kept: Sequence[str]) -> list[Entry]:
    """The CI runner's files its variables name: read-only inside (`CI_FILES`)."""
    entries = []
    for variable, why in CI_FILES:
        value = environ.get(variable, "")
        if os.path.isabs(value) and _narrow(value, kept):
            entries.append(Entry(value, READ_ONLY, f"${variable}: {why}"))
    return entries


def named_by_sealed_variables(
    environ: Mapping[str, str], sealed: Callable[[str], bool], cwd: str, kept: Sequence[str]
) -> list[Entry]:
    """What each sealed variable of the operator's environment names (a key file, a config
    directory; each part of a `:`-separated list): the seal drops the variable, and the mask
    hides what it named. A value is a path when it holds a `/` or starts with `~`."""
    home = environ.get("HOME", "")
    entries = []
    for name, value in sorted(environ.items()):
        if not sealed(name):
            continue
        for part in value.split(os.pathsep):
            if "/" not in part and not part.startswith("~"):
                continue
            if part.startswith("~/") and home:
                part = os.path.join(home, part[2:])
            path = os.path.join(cwd, part)
            if os.path.lexists(path) and _narrow(path, kept):
                entries.append(Entry(os.path.normpath(path), EMPTY, f"named by ${name}"))
    return entries


def link_targets(masked: Sequence[str], kept: Sequence[str]) -> list[Entry]:
    """Where each link found inside a masked home points, when that is outside it: the mask
    covers the link, not its target (`~/.aws/credentials -> ~/dotfiles/aws/credentials`)."""
    entries: list[Entry] = []
    budget = LINK_WALK_LIMIT
    for home in masked:
        top = os.path.realpath(home)
        if not os.path.isdir(top):
            continue
        for directory, subdirectories, files in os.walk(top):
            for name in (*subdirectories, *files):
                budget -= 1
                path = os.path.join(directory, name)
                if not os.path.islink(path):
                    continue
                target = os.path.realpath(path)
                if os.path.exists(target) and not _within(target, top) and _narrow(target, kept):
                    entries.append(Entry(target, EMPTY, f"{LINK_TARGET} ({path})"))
            if budget <= 0:
                return entries
    return entries


def _narrow(path: str, kept: Sequence[str]) -> bool:
    """True when `path` may be hidden or frozen whole: neither a shared directory nor at or
    above a directory the run needs (the checkout, the temporary directory, a home)."""
    real = os.path.realpath(path)
    if real in SHARED_DIRECTORIES:
        return False
    return not any(_within(os.path.realpath(k), real) for k in kept if k)


def repository_hooks(cwd: str) -> list[tuple[str, str]]:
    """The git hooks and config of the repository `cwd` is in: written inside, they would run
    later outside (a hook on the next commit, `core.hooksPath`, `core.fsmonitor`)."""
    found_dirs = git_directories(cwd)
    if found_dirs is None:
        return []
    git_dir, common = found_dirs
    why = "a git hook or setting written inside would run later, outside the seal"
    paths = dict.fromkeys(
        (
            os.path.join(common, "hooks"),
            os.path.join(common, "config"),
            os.path.join(git_dir, "config.worktree"),
        )
    )
    found = [(path, why) for path in paths]
    # Its exclude rules: a file written there hides new files from git (and so from the
    # comparison of the checkout after a run, cloudguard.guard.tracked).
    return [*found, (os.path.join(common, "info"), "git's exclude rules: they hide new files")]


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
        # The homes' upper layers: a tmpfs of their own (its size the kernel's default, half
        # the memory), detached with this one; each overlay keeps its own hold of it.
        self.layers = os.path.join(directory, "layers")
        os.mkdir(self.layers, 0o700)
        linux.mount("cloudguard-layers", self.layers, "tmpfs", linux.MS_NOSUID, "mode=0700")
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


def apply(
    entries: Sequence[Entry],
    empty_file: str,
    holes: Mapping[str, str],
    layers_dir: str | None = None,
) -> list[Entry]:
    """Mount every entry whose path exists; the ones applied, with their real paths.

    `holes`: files to show inside an `EMPTY` directory all the same (target -> source), each
    bound in before the mask turns read-only (the seal's resolv.conf where /etc/resolv.conf's
    link ends, an --allow-unix socket); a hole outside every mask is bound over its target.
    `layers_dir`: where the homes' upper layers are made (without it, a home is read-only).
    """
    from cloudguard.guard.hard import linux

    pins = {target: os.open(source, os.O_PATH | os.O_CLOEXEC) for target, source in holes.items()}
    # An output inside a layered home is written for real: bound from the real directory.
    real = {
        os.path.realpath(e.path): os.open(e.path, os.O_PATH | os.O_CLOEXEC)
        for e in entries
        if e.kind == WRITABLE and os.path.exists(e.path)
    }
    try:
        applied = _layered([e for e in entries if e.kind in (LAYER, REAL)], layers_dir)
        layered = [e.path for e in applied if e.kind == LAYER]
        bound_back = [e.path for e in applied if e.kind == REAL]
        for entry in _resolved([e for e in entries if e.kind not in (LAYER, REAL)]):
            if entry.kind == WRITABLE and _beneath_layer(entry.path, layered, bound_back):
                linux.mount(f"/proc/self/fd/{real[entry.path]}", entry.path, None, BIND_TREE)
                _read_only(entry.path, writable=True)
            elif entry.kind in (READ_ONLY, WRITABLE):
                linux.mount(entry.path, entry.path, None, linux.MS_BIND | linux.MS_REC)
                _read_only(entry.path, writable=entry.kind == WRITABLE)
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
        for pin in (*pins.values(), *real.values()):
            os.close(pin)


def _layered(entries: Sequence[Entry], layers_dir: str | None) -> list[Entry]:
    """The homes' layers, outermost first, and what is written for real beneath them (bound
    from the real directory, pinned before any layer covered it)."""
    from cloudguard.guard.hard import linux

    found = [
        Entry(os.path.realpath(e.path), e.kind, e.reason) for e in entries if os.path.isdir(e.path)
    ]
    found.sort(key=lambda e: (e.path.count("/"), e.kind != REAL))
    pins = {e.path: os.open(e.path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC) for e in found}
    try:
        for number, entry in enumerate(found):
            if entry.kind == REAL:
                linux.mount(f"/proc/self/fd/{pins[entry.path]}", entry.path, None, BIND_TREE)
            elif layers_dir is None:
                linux.mount(entry.path, entry.path, None, BIND_TREE)
                _read_only(entry.path)
            else:
                try:
                    _overlay(entry.path, os.path.join(layers_dir, str(number)))
                except OSError as error:  # no overlayfs for a user namespace (before 5.11)
                    linux.mount(entry.path, entry.path, None, BIND_TREE)
                    _read_only(entry.path)
                    os.write(2, layer_refused(entry.path, error).encode("utf-8", "replace"))
        return found
    finally:
        for pin in pins.values():
            os.close(pin)


def _beneath_layer(path: str, layered: Sequence[str], bound_back: Sequence[str]) -> bool:
    """True when the nearest of the layers and real binds above `path` is a layer."""
    above = [(p, True) for p in layered if _within(path, p)]
    above += [(p, False) for p in bound_back if _within(path, p)]
    return bool(above) and max(above, key=lambda pair: len(pair[0]))[1]


def layer_refused(home: str, error: OSError) -> str:
    """The declared limit where the kernel refuses the layer: the home is read-only instead."""
    return (
        f"cloudguard: --hard: declared limit: the kernel refused an overlay over {home} "
        f"({error.strerror or error}): it is read-only inside instead of a layer thrown away "
        "after the run (a write there fails, EROFS)\n"
    )


def _overlay(path: str, layer: str) -> None:
    """An overlay over `path`: the real directory below, an upper layer on the seal's tmpfs
    (its top owned and moded as the real directory is: the overlay's root is the upper's).
    `userxattr`: its own metadata in user.* attributes, which a user namespace may write."""
    from cloudguard.guard.hard import linux

    upper, work = os.path.join(layer, "upper"), os.path.join(layer, "work")
    os.makedirs(upper)
    os.mkdir(work)
    status = os.stat(path)
    with contextlib.suppress(OSError):  # an owner this namespace does not map stays ours
        os.chown(upper, status.st_uid, status.st_gid)
    os.chmod(upper, stat.S_IMODE(status.st_mode))
    options = f"userxattr,lowerdir={_escaped(path)},upperdir={upper},workdir={work}"
    linux.mount("cloudguard-home", path, "overlay", linux.MS_NOSUID | linux.MS_NODEV, options)


def _escaped(path: str) -> str:
    """A path as an overlay option: its separators (`,` `:`) and `\\` escaped."""
    return path.replace("\\", "\\\\").replace(",", "\\,").replace(":", "\\:")


def _resolved(entries: Sequence[Entry]) -> list[Entry]:
    """Real paths, existing only, one entry per path; none inside an `EMPTY` directory already
    covered (its mask hides it); read-only entries after the masks, writable ones last."""
    real: dict[str, Entry] = {}
    for entry in entries:
        if os.path.lexists(entry.path):
            path = os.path.realpath(entry.path)
            if os.path.exists(path):
                real.setdefault(path, Entry(path, entry.kind, entry.reason))
    masked = [p for p, e in real.items() if e.kind == EMPTY and os.path.isdir(p)]
    kept = [e for p, e in sorted(real.items()) if not any(_within(p, d) and p != d for d in masked)]
    return sorted(kept, key=lambda e: (EMPTY, READ_ONLY, WRITABLE).index(e.kind))


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


BIND_TREE = 0x1000 | 0x4000  # MS_BIND | MS_REC: a directory with what is mounted beneath it

# statvfs flag -> mount flag, for the flags a user namespace may not change on a bind it remounts
_LOCKED = {0x2: 0x2, 0x4: 0x4, 0x8: 0x8, 0x400: 0x400, 0x800: 0x800, 0x1000: 1 << 21}
MS_STRICTATIME = 1 << 24


def _read_only(path: str, *, writable: bool = False) -> None:
    """Remount the bind at `path` read-only (or, `writable`, writable again inside a read-only
    one), keeping the flags the kernel locked on its source (nosuid, nodev, noexec and the
    atime mode, which an unprivileged remount may not change)."""
    from cloudguard.guard.hard import linux

    current = os.statvfs(path).f_flag
    locked = 0
    for statvfs_flag, mount_flag in _LOCKED.items():
        if current & statvfs_flag:
            locked |= mount_flag
    if not current & (0x400 | 0x1000):  # neither noatime nor relatime: strictatime
        locked |= MS_STRICTATIME
    read_only = 0 if writable else linux.MS_RDONLY
    linux.mount(None, path, None, linux.MS_REMOUNT | linux.MS_BIND | read_only | locked)


# Written for real whatever else is frozen: the shared temporary directories, and the one a
# semaphore needs (multiprocessing: /dev/shm). The kernel's own trees are left as they are:
# nothing there is a file a later program runs.
ALWAYS_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue")
KERNEL_TREES = ("/proc", "/sys", "/dev")
# A mount a user namespace cannot remount (hidden beneath another, unreadable, stale): the
# path resolves to the mount above it, which is frozen in its turn.
_UNREACHABLE = (errno.EACCES, errno.EPERM, errno.EINVAL, errno.ENOENT, errno.ESTALE, errno.ENODEV)


def freeze_the_rest(applied: Sequence[Entry], cwd: str, temp_dir: str) -> int:
    """Every other mount read-only: what the run may write (the checkout, the temporary
    directories, the homes' layers and what is bound back real, the outputs) bound on itself
    first, so it stays writable. A process of the invoking user could not write most of the
    rest anyway; one run as root (a CI container) could, and `/usr/local/bin/git` or
    `/etc/gitconfig` would run later, outside. The number of mounts made read-only."""
    from cloudguard.guard.hard import linux

    writable = [os.path.realpath(checkout_top(cwd)), os.path.realpath(temp_dir)]
    writable += [e.path for e in applied if e.kind in (LAYER, REAL, WRITABLE)]
    writable += [os.path.realpath(p) for p in ALWAYS_WRITABLE]
    writable = [p for p in dict.fromkeys(writable) if os.path.isdir(p) or os.path.isfile(p)]
    points = mount_points()
    for path in writable:
        if path not in points:
            linux.mount(path, path, None, BIND_TREE)
    frozen = 0
    for point in mount_points():
        if any(_within(point, p) for p in (*writable, *KERNEL_TREES)):
            continue
        try:
            if os.statvfs(point).f_flag & os.ST_RDONLY:
                continue
            _read_only(point)
            frozen += 1
        except OSError as error:
            if point == "/" or error.errno not in _UNREACHABLE:
                raise
    return frozen


def mount_points() -> list[str]:
    """This mount namespace's mount points, parents first (/proc/self/mountinfo)."""
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as handle:
        points = [_unescaped(line.split()[4]) for line in handle if line.strip()]
    return list(dict.fromkeys(points))


def _unescaped(field: str) -> str:
    """A mountinfo path: space, tab, newline and backslash are octal escapes (`\\040`)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


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

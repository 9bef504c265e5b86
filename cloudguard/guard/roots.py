"""Ambient roots: where they are, what is in them, and what a run changed there.

A root is declared in the registry (`[ambient.roots]`, and every
`[hard.masked_homes]` entry) as `~/x`, `$VAR/x` or `/x`, and expanded in the
environment the run was started from (the operator's, before the seal): `~`
is that HOME; an XDG base variable that is unset or relative takes its
default from the XDG Base Directory spec (`$XDG_DATA_HOME` is
`~/.local/share`); any other unset variable means there is no such root
here. Outputs inside a root (`[outputs]`) are left out of it.

A `Snapshot` fingerprints every root before the run and again after;
`changes` names each path that was created, deleted or modified. Per entry:
its type, mode, size, mtime, ctime and inode, a symlink's target, and for a
small regular file changed lately a hash of its content. A process cannot
set ctime back (a write undone with `utime` still shows), and any write
moves it past the time it had, except within the clock tick the file last
changed in: so a file whose ctime is older than `RECENT` before the first
look is judged by its stat fields alone, and a newer one by its content
too (a rewrite of the same length in the same tick still shows). The cost
is bounded (docs/guard.md, "Ambient roots"):

- `MAX_ENTRIES` entries per root, walked in sorted order; a root cut short
  is compared up to where the first walk stopped, and said so (`partial`);
- content hashed only for files changed lately, of at most `HASH_MAX_FILE`
  bytes, at most `HASH_BUDGET` bytes per snapshot: past that, the stat
  fields decide.

A symlink inside a root is judged where it points (a write through
`~/.aws/credentials -> ~/dotfiles/aws/credentials` changes the root's data):
its fingerprint is its own (the target it names) and the target's, and a
link to a directory is walked as one, each directory once per walk (a loop
of links ends there). Stdlib only (hashlib, os).
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import stat
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

MAX_ENTRIES = 50_000
HASH_MAX_FILE = 64 * 1024
HASH_BUDGET = 32 * 1024 * 1024
# A ctime this close before the first look may be the tick a write in the run lands in too.
RECENT_NS = 2_000_000_000

# The XDG Base Directory defaults, relative to HOME: an unset or relative value takes these.
XDG_DEFAULTS = {
    "XDG_DATA_HOME": ".local/share",
    "XDG_STATE_HOME": ".local/state",
    "XDG_CONFIG_HOME": ".config",
    "XDG_CACHE_HOME": ".cache",
}

Fingerprint = tuple[object, ...]


@dataclass(frozen=True)
class Root:
    """One ambient root: as declared (`~/.azure`), and where it is on this machine."""

    entry: str
    path: str


@dataclass(frozen=True)
class Change:
    path: str
    change: str  # "created", "deleted", "modified"
    root: str  # the entry it falls under, as declared


def expand(entry: str, environ: Mapping[str, str]) -> str | None:
    """`entry` as an absolute, normalised path in `environ`; None when it names nothing here."""
    head, _, rest = entry.partition("/")
    if head == "~":
        base = environ.get("HOME") or os.path.expanduser("~")
    elif head.startswith("$"):
        name = head[1:].strip("{}")
        base = environ.get(name, "")
        if not os.path.isabs(base) and name in XDG_DEFAULTS:
            home = environ.get("HOME") or os.path.expanduser("~")
            base = os.path.join(home, XDG_DEFAULTS[name])
        if not os.path.isabs(base):
            return None  # unset (or relative: a path relative to whose directory?)
    elif head == "":
        base = "/"
    else:
        return None
    return os.path.normpath(os.path.join(base, rest))


def resolve(entries: Iterable[str], environ: Mapping[str, str]) -> list[Root]:
    """The roots `entries` name here; one per path (the first entry naming it wins)."""
    found: dict[str, Root] = {}
    for entry in entries:
        path = expand(entry, environ)
        if path is not None and path not in found:
            found[path] = Root(entry, path)
    return list(found.values())


def under(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def matches(relative: str, pattern: str) -> bool:
    """A checkout-relative path under an output entry: equal to it, below it, or matching it as
    a glob (`*` crosses `/`), itself or any of its parent directories."""
    parts = relative.split("/")
    for depth in range(len(parts), 0, -1):
        candidate = "/".join(parts[:depth])
        if candidate == pattern or fnmatch.fnmatchcase(candidate, pattern):
            return True
    return False


@dataclass
class Snapshot:
    """The fingerprint of every root: path -> fingerprint, and the roots walked only in part."""

    roots: Sequence[Root]
    skip: Sequence[str]  # absolute paths left out (outputs, the run's own log and seal)
    entries: dict[str, Fingerprint] = field(default_factory=dict)
    cut: dict[str, tuple[str, ...]] = field(default_factory=dict)  # root path -> last key walked
    hashed: int = 0  # bytes hashed (HASH_BUDGET)
    recent_ns: int = 0  # a file whose ctime is at or after this is hashed
    rehash: frozenset[str] = frozenset()  # (a later look) the paths the first look hashed

    @classmethod
    def take(cls, roots: Sequence[Root], skip: Sequence[str] = ()) -> Snapshot:
        snapshot = cls(roots, skip, recent_ns=time.time_ns() - RECENT_NS)
        for root in roots:
            snapshot._walk(root, limit=None)
        return snapshot

    def again(self) -> Snapshot:
        """A snapshot of the same roots, each walked as far as this one walked it, hashing what
        this one hashed (and what changed since)."""
        hashed = frozenset(p for p, f in self.entries.items() if _hashed(f))
        later = Snapshot(self.roots, self.skip, recent_ns=self.recent_ns, rehash=hashed)
        for root in self.roots:
            later._walk(root, limit=self.cut.get(root.path))
        return later

    @property
    def partial(self) -> list[str]:
        """The roots walked only in part (over MAX_ENTRIES entries), as declared."""
        return [root.entry for root in self.roots if root.path in self.cut]

    def _walk(self, root: Root, limit: tuple[str, ...] | None) -> None:
        if any(under(root.path, skipped) for skipped in self.skip):
            return  # the whole root is an output
        last: tuple[str, ...] = ()
        for count, (key, path, status) in enumerate(_sorted_walk(root.path, self.skip)):
            if limit is not None and key > limit:
                return
            if limit is None and count == MAX_ENTRIES:
                self.cut[root.path] = last
                return
            if status is not None and stat.S_ISLNK(status.st_mode):
                # Judged where it points: the link's own fields, then its target's.
                target = _followed(path)
                self.entries[path] = (
                    *fingerprint(path, status),
                    *self._fingerprint(path, target, follow=True),
                )
            else:  # the root itself was looked at through any link (`os.stat`)
                self.entries[path] = self._fingerprint(path, status, follow=not key)
            last = key

    def _fingerprint(
        self, path: str, status: os.stat_result | None, *, follow: bool = False
    ) -> Fingerprint:
        if status is None or not stat.S_ISREG(status.st_mode):
            return fingerprint(path, status)
        size = status.st_size
        content = path in self.rehash or (
            status.st_ctime_ns >= self.recent_ns
            and size <= HASH_MAX_FILE
            and self.hashed + size <= HASH_BUDGET
        )
        if content:
            self.hashed += size
        return fingerprint(path, status, content=content, follow=follow)

    def changes(self, later: Snapshot) -> list[Change]:
        """What changed from this snapshot to `later`, each under the root it falls in."""
        found = []
        for path in sorted(self.entries.keys() | later.entries.keys()):
            before, after = self.entries.get(path), later.entries.get(path)
            if before == after:
                continue
            change = "created" if before is None else "deleted" if after is None else "modified"
            if change != "deleted" and _is_directory(after) and self._holds_skipped(path):
                continue  # on the way to an output: made for it, its timestamps move with it
            found.append(Change(path, change, self._root_of(path)))
        return found

    def _holds_skipped(self, directory: str) -> bool:
        return any(under(skipped, directory) for skipped in self.skip)

    def _root_of(self, path: str) -> str:
        return next((r.entry for r in self.roots if under(path, r.path)), "")


def _hashed(print_: Fingerprint) -> bool:
    # A regular file's print, or a link's that ends with its target's.
    return len(print_) >= 7 and print_[-7] == stat.S_IFREG and print_[-1] is not None


def _is_directory(print_: Fingerprint | None) -> bool:
    return print_ is not None and print_[0] == stat.S_IFDIR


def fingerprint(
    path: str, status: os.stat_result | None, *, content: bool = True, follow: bool = False
) -> Fingerprint:
    """One entry: type, mode, inode, mtime, ctime; a symlink's target; a regular file's size
    and, with `content` and when small, a hash of its bytes."""
    if status is None:
        return ("unreadable",)
    mode = status.st_mode
    base = (stat.S_IFMT(mode), stat.S_IMODE(mode), status.st_ino, status.st_mtime_ns,
            status.st_ctime_ns)  # fmt: skip
    if stat.S_ISLNK(mode):
        return (*base, _readlink(path))
    if stat.S_ISREG(mode):
        small = content and status.st_size <= HASH_MAX_FILE
        return (*base, status.st_size, _digest(path, follow=follow) if small else None)
    return base


def _sorted_walk(
    top: str, skip: Sequence[str]
) -> Iterator[tuple[tuple[str, ...], str, os.stat_result | None]]:
    """(key, path, lstat) for `top` and everything under it, depth first in sorted order; a
    symlink below `top` to a directory is walked as that directory, under the link's path
    (the root itself may be one too: the data is where it points), each directory once (a
    loop of links ends at the directory seen before). The key, the path's components under
    `top`, ascends along the walk: a later walk can stop where this one stopped."""
    try:
        status = os.stat(top)
    except FileNotFoundError:
        return
    except OSError:
        status = None
    yield (), top, status
    if status is None or not stat.S_ISDIR(status.st_mode):
        return
    seen = {(status.st_dev, status.st_ino)}
    # Each directory carries the skipped paths below it: most carry none, and check nothing.
    Level = tuple[tuple[str, ...], str, Iterator[str], list[str]]
    stack: list[Level] = [((), top, iter(_names(top)), [p for p in skip if under(p, top)])]
    while stack:
        key, directory, names, below = stack[-1]
        name = next(names, None)
        if name is None:
            stack.pop()
            continue
        path = os.path.join(directory, name)
        if below and any(under(path, skipped) for skipped in below):
            continue
        try:
            child: os.stat_result | None = os.lstat(path)
        except FileNotFoundError:
            continue
        except OSError:
            child = None
        yield (*key, name), path, child
        if child is not None and stat.S_ISLNK(child.st_mode):
            child = _followed(path)  # a link to a directory is walked as one, once
        if child is not None and stat.S_ISDIR(child.st_mode):
            if (child.st_dev, child.st_ino) in seen:
                continue
            seen.add((child.st_dev, child.st_ino))
            inner = [p for p in below if under(p, path)]
            stack.append(((*key, name), path, iter(_names(path)), inner))


def _names(directory: str) -> list[str]:
    try:
        with os.scandir(directory) as listing:
            return sorted(entry.name for entry in listing)
    except OSError:
        return []  # unreadable: its own fingerprint says so, before and after alike


def _readlink(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""


def _followed(path: str) -> os.stat_result | None:
    """What a link points to (None: nothing, or nothing readable)."""
    try:
        return os.stat(path)
    except OSError:
        return None


def _digest(path: str, *, follow: bool = False) -> str:
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError:
        return "unreadable"
    try:
        return hashlib.blake2b(os.read(fd, HASH_MAX_FILE + 1), digest_size=16).hexdigest()
    except OSError:
        return "unreadable"
    finally:
        os.close(fd)

"""Which test wrote into an ambient root: inotify watches, read after each test.

The before/after comparison (`witness`) proves a root unchanged or names
what changed, but not when. A pytest session that runs its tests one at a
time also watches every root with inotify (any process's write to a watched
directory is an event: the test's own, a subprocess's, a C library's) and
reads the events after each test phase, so a write is named in the test
that was running. One non-blocking read per phase when nothing happened.

What it cannot tell, it leaves to the comparison after the session: a write
under xdist (sibling workers' tests run at the same time, and inotify does
not say which process wrote), a write through `mmap`, into a directory
created after the watch began and written before its own watch was added,
or past `MAX_WATCHES` directories. A root that does not exist yet is watched
through its nearest existing parent, for the root's own creation. A link
inside a root is watched where it points, as the comparison judges it
(`roots`): a link to a directory as that directory (each directory once), a
link to a file as that file, named by the link's path. Stdlib only (ctypes
for the three libc calls).
"""

from __future__ import annotations

import ctypes
import os
import struct
from collections.abc import Sequence

from cloudguard.guard.roots import Root, under

MAX_WATCHES = 4096
IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_ISDIR = 0x40000000
IN_MASK_ADD = 0x20000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC
# What a write is. Not IN_CLOSE_WRITE: a file opened for writing and closed unwritten is no write.
WRITES = (
    IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
    | IN_DELETE_SELF | IN_MOVE_SELF
)  # fmt: skip
APPEARS = IN_CREATE | IN_MOVED_TO
DISAPPEARS = IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF
_EVENT = struct.Struct("iIII")


class _Watched:
    """One watch descriptor: a directory (or file) of a root, or a parent awaiting a root."""

    __slots__ = ("awaited", "path", "root")

    def __init__(self, path: str, root: Root | None) -> None:
        self.path = path
        self.root = root  # the root this is part of (None: only a parent of missing roots)
        self.awaited: dict[str, Root] = {}  # a child name -> the missing root it would be


class Watcher:
    def __init__(self, roots: Sequence[Root], skip: Sequence[str] = ()) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.skip = tuple(skip)
        self.watched: dict[int, _Watched] = {}
        self.incomplete = False  # MAX_WATCHES reached: the comparison after has the rest
        self._directories: set[tuple[int, int]] = set()  # (device, inode) watched: loops end
        for root in roots:
            self._watch_root(root)

    def _add(self, path: str, mask: int) -> int | None:
        if len(self.watched) >= MAX_WATCHES:
            self.incomplete = True
            return None
        wd = self._libc.inotify_add_watch(self.fd, os.fsencode(path), mask)
        return wd if wd >= 0 else None

    def _watch_root(self, root: Root) -> bool:
        """Watch `root`'s tree; True when it exists. Else await it from its nearest existing
        parent (each directory on the way, as it appears: a sibling is no write of the root's)."""
        if os.path.lexists(root.path):
            self._watch_tree(root.path, root)
            return True
        parent, name = os.path.split(root.path)
        while not os.path.isdir(parent) and parent != "/":
            parent, name = os.path.split(parent)
        wd = self._add(parent, APPEARS | IN_MASK_ADD)
        if wd is not None:
            self.watched.setdefault(wd, _Watched(parent, None)).awaited[name] = root
        return False

    def _watch_tree(self, top: str, root: Root, found: list[str] | None = None) -> None:
        """Watch `top` and every directory below it; with `found`, also list what is already
        there (a directory that just appeared may hold files written before its watch)."""
        pending = [(top, False)]
        while pending:
            path, through_link = pending.pop()
            try:
                status = os.stat(path)  # through a link: the directory it is
            except OSError:
                continue
            key = (status.st_dev, status.st_ino)
            if through_link and key in self._directories:
                continue  # seen through another path (a loop of links)
            wd = self._add(path, WRITES | IN_MASK_ADD)
            if wd is None:
                continue
            self._directories.add(key)
            self.watched.setdefault(wd, _Watched(path, root)).root = root
            try:
                with os.scandir(path) as listing:
                    for entry in listing:
                        if self._skipped(entry.path):
                            continue
                        if found is not None:
                            found.append(entry.path)
                        if entry.is_dir():  # a link to a directory too
                            pending.append((entry.path, entry.is_symlink()))
                        elif entry.is_symlink():
                            self._watch_link(entry.path, root)
            except OSError:
                continue  # a file root, or unreadable: the comparison after covers it

    def _watch_link(self, link: str, root: Root) -> None:
        """A link to a file: its target is watched (inotify follows the link), named by the
        link's path (its events carry no name)."""
        wd = self._add(link, WRITES | IN_MASK_ADD)
        if wd is not None:
            self.watched.setdefault(wd, _Watched(link, root))

    def _skipped(self, path: str) -> bool:
        return any(under(path, skipped) for skipped in self.skip)

    def _holds_skipped(self, directory: str) -> bool:
        """A directory on the way to an output: creating it is part of writing the output."""
        return any(under(skipped, directory) for skipped in self.skip)

    def poll(self) -> list[tuple[str, str, str]]:
        """Writes seen since the last poll: (path, change, the root's entry), once per path."""
        seen: dict[str, tuple[str, str]] = {}
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                name = data[offset + _EVENT.size : offset + _EVENT.size + length].rstrip(b"\0")
                offset += _EVENT.size + length
                for path, change, entry in self._event(wd, mask, os.fsdecode(name)):
                    seen.setdefault(path, (change, entry))
        return [(path, change, entry) for path, (change, entry) in seen.items()]

    def _event(self, wd: int, mask: int, name: str) -> list[tuple[str, str, str]]:
        if mask & IN_Q_OVERFLOW:
            return [("every ambient root", "written (too many events to name each)", "")]
        watched = self.watched.get(wd)
        if watched is None:
            return []
        path = os.path.join(watched.path, name) if name else watched.path
        awaited = watched.awaited.pop(name, None) if mask & APPEARS else None
        if awaited is not None and watched.root is None:
            # A directory on the way to a missing root appeared: the root itself, or not yet.
            return [(awaited.path, "created", awaited.entry)] if self._watch_root(awaited) else []
        root = watched.root
        if root is None or self._skipped(path):
            return []
        found: list[str] = []
        if mask & APPEARS and mask & IN_ISDIR:
            self._watch_tree(path, root, found)  # its later writes are seen too (best effort)
        if mask & IN_ISDIR and not mask & DISAPPEARS and self._holds_skipped(path):
            return [(p, "created", root.entry) for p in found if not self._holds_skipped(p)]
        if mask & APPEARS:
            change = "created"
        elif mask & DISAPPEARS:
            change = "deleted"
        else:
            change = "modified"
        return [(path, change, root.entry), *((p, "created", root.entry) for p in found)]

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

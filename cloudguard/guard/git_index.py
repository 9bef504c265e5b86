"""What git's index says, read as bytes (no git run): each entry's path, mode, object and flags.

The tracked-files check compares the index from before the run with the one
after without asking git (`tracked`). Only what the index decides is
compared: which paths are tracked, as which object and mode, at which
stage, and the bits that hide a file from `git status` (assume-valid,
skip-worktree, intent-to-add). The cached stat fields are left out: a
`git status` the suite runs may rewrite them (a refresh), and that hides
nothing. Formats 2, 3 and 4 (gitformat-index(5)); an index split in two or
in a form not read here is compared by its bytes instead (`None`: the
caller's fallback). Stdlib only.
"""

from __future__ import annotations

import hashlib
import struct

_HEADER = struct.Struct(">4sII")
_STAT_BYTES = 40  # ctime, mtime (8 each), dev, ino, mode, uid, gid, size (4 each)
ASSUME_VALID = 0x8000
EXTENDED = 0x4000
STAGE = 0x3000
NAME_LENGTH = 0x0FFF
# Extended flags (format 3 and later): skip-worktree and intent-to-add.
KEPT_EXTENDED = 0x4000 | 0x2000


def digest(data: bytes, oid_size: int = 20) -> str | None:
    """A digest of the entries `data` (an index file's bytes) holds, stat fields left out;
    None when the index is not one read here (split, sparse, another format, truncated)."""
    return read(data, oid_size)[0]


def read(
    data: bytes, oid_size: int = 20
) -> tuple[str | None, dict[bytes, tuple[bytes, tuple[int, ...]]]]:
    """`digest` and `clean` of one index, read once."""
    cached: list[tuple[int, ...]] = []
    try:
        entries = _entries(data, oid_size, cached)
    except (ValueError, struct.error, IndexError):
        return None, {}
    if entries is None:
        return None, {}
    return _summary(entries), _clean(entries, cached)


def _summary(entries: list[tuple[bytes, int, bytes, int, int]]) -> str:
    summary = hashlib.blake2b(digest_size=16)
    for path, mode, oid, flags, extended in entries:
        summary.update(path + b"\0" + struct.pack(">IHH", mode, flags, extended) + oid)
    return summary.hexdigest()


def clean(data: bytes, oid_size: int = 20) -> dict[bytes, tuple[bytes, tuple[int, ...]]]:
    """Each stage-0 entry's object and cached stat fields (ctime s, mtime s, inode, size,
    each as git keeps them: 32 bits): a file whose stat matches them, older than the index,
    is what git itself calls clean without reading it. Empty when the index is not read."""
    return read(data, oid_size)[1]


def _clean(
    entries: list[tuple[bytes, int, bytes, int, int]], cached: list[tuple[int, ...]]
) -> dict[bytes, tuple[bytes, tuple[int, ...]]]:
    return {
        path: (oid, fields)
        for (path, _mode, oid, flags, extended), fields in zip(entries, cached, strict=True)
        if not flags & STAGE and not extended and not flags & ASSUME_VALID
    }


def _entries(
    data: bytes, oid_size: int, cached: list[tuple[int, ...]] | None = None
) -> list[tuple[bytes, int, bytes, int, int]] | None:
    signature, version, count = _HEADER.unpack_from(data, 0)
    if signature != b"DIRC" or version not in (2, 3, 4):
        return None
    offset = _HEADER.size
    previous = b""
    entries = []
    for _ in range(count):
        start = offset
        (mode,) = struct.unpack_from(">I", data, start + 24)
        if cached is not None:
            ctime, _, mtime, _, _, ino, _, _, _, size = struct.unpack_from(">10I", data, start)
            cached.append((ctime, mtime, ino, size))
        offset = start + _STAT_BYTES
        oid = data[offset : offset + oid_size]
        offset += oid_size
        (flags,) = struct.unpack_from(">H", data, offset)
        offset += 2
        extended = 0
        if flags & EXTENDED:
            if version < 3:
                raise ValueError("extended flags in a format-2 index")
            (extended,) = struct.unpack_from(">H", data, offset)
            offset += 2
        if version == 4:
            strip, offset = _varint(data, offset)
            end = data.index(b"\0", offset)
            if strip > len(previous):
                raise ValueError("prefix longer than the previous path")
            path = previous[: len(previous) - strip] + data[offset:end]
            offset = end + 1
        else:
            end = data.index(b"\0", offset)
            path = data[offset:end]
            # Padded with 1 to 8 NULs to a multiple of 8 bytes from the entry's start.
            offset = start + ((end - start) // 8 + 1) * 8
        if offset > len(data):
            raise ValueError("truncated")
        previous = path
        kept = flags & (ASSUME_VALID | STAGE)
        entries.append((path, mode, oid, kept, extended & KEPT_EXTENDED))
    for name in _extensions(data, offset, oid_size):
        if name in (b"link", b"sdir"):
            return None  # entries live in a shared index, or directories stand for files
    return entries


def _extensions(data: bytes, offset: int, oid_size: int) -> list[bytes]:
    names = []
    end = len(data) - oid_size  # the trailing checksum
    while offset + 8 <= end:
        name = data[offset : offset + 4]
        (size,) = struct.unpack_from(">I", data, offset + 4)
        names.append(name)
        offset += 8 + size
    return names


def _varint(data: bytes, offset: int) -> tuple[int, int]:
    """git's offset encoding (gitformat-index(5), format 4's prefix length)."""
    byte = data[offset]
    offset += 1
    value = byte & 0x7F
    while byte & 0x80:
        byte = data[offset]
        offset += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, offset

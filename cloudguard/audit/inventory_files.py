"""Offline inventories: the JSON users already have, read into `Resource` records.

Shapes are told apart by their structure, not by the file name: each
installed cloud's export parsers (`Cloud.export_parsers`: `az vm list -d -o
json`, `aws ec2 describe-instances`, ...) claim the entries of a top-level
list, or a whole document, that are theirs. `-` reads stdin.

A top-level list is decoded one entry at a time (the C decoder's scanner, as
`raw_decode` calls it), each entry dropped once it is a compact `Resource`: the whole
document is never a tree in memory, which is what made a 100,000-VM export
cost a gigabyte. Strings that repeat across VMs (regions, groups, sizes, tag
keys and values) are interned, so each is held once.

A file that cannot be read or parsed is a `SourceFailure`, never an empty
inventory: an audit that did not see the resources must not report "clean".
"""

from __future__ import annotations

import codecs
import errno
import json
import os
import re
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from cloudguard import json_input, private_files
from cloudguard.cloud.adapter_registry import Clouds, installed_clouds
from cloudguard.cloud.exports import ExportParser, InventoryFormatError
from cloudguard.cloud.records import Resource, SourceFailure, SweepResult

STDIN = "-"


@dataclass(frozen=True)
class InventoryFile:
    """An inventory read from a file path, or from stdin when the path is `-`."""

    path: str
    stdin: TextIO | None = None  # injectable for tests; defaults to sys.stdin
    clouds: Clouds | None = None  # whose export parsers read it (default: the installed)

    @property
    def label(self) -> str:
        return "stdin" if self.path == STDIN else self.path

    def read(self) -> SweepResult:
        source = f"inventory {self.label}"
        try:
            if self.path == STDIN:
                text = (self.stdin or sys.stdin).read()
            else:
                text = _decoded(read_capped(self.path))
        except TooLarge as exc:
            return _failed(source, str(exc))
        except (OSError, UnicodeDecodeError) as exc:
            return _failed(source, f"cannot read: {exc}")
        if not text.strip():
            # `az vm list` prints `[]` when there are no VMs; an empty file is
            # a command that failed or was never run.
            return _failed(source, "empty file (no JSON document); an empty az list is `[]`")
        try:
            parsers = _parsers(self.clouds or installed_clouds())
            resources = tuple(_parse_text(text, sys.intern(self.label), parsers))
        except json.JSONDecodeError as exc:
            return _failed(source, f"malformed JSON: {exc}")
        except InventoryFormatError as exc:
            return _failed(source, str(exc))
        return SweepResult(resources=resources)


# The largest inventory file read: an export of 100,000 VMs is about 200 MB; past this it
# is no export (`-i /dev/zero` grew to 6 GB in 10 s before the cap).
MAX_INVENTORY_BYTES = 2 * 1024**3
MAX_TEXT = "2 GiB"


class TooLarge(Exception):
    """Larger than MAX_INVENTORY_BYTES."""


def inventory_problem(path: str) -> str | None:
    """Why `path` cannot be an inventory file, before anything is read: not a regular file
    (a FIFO would hang the audit, a device never ends), or larger than the cap. None: fine,
    or missing or a directory (the read says so, as a source that could not be read)."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    if stat.S_ISDIR(status.st_mode):
        return None  # as before: a source that cannot be read (75), named
    if not stat.S_ISREG(status.st_mode):
        return f"{path} is not a regular file (a FIFO or a device): give a file"
    if status.st_size > MAX_INVENTORY_BYTES:
        return f"{path} is larger than {MAX_TEXT}, the most an inventory file may be"
    return None


def read_capped(path: str) -> bytes:
    """The file's bytes: opened without waiting (a FIFO swapped in since is refused, not
    waited on), a regular file, at most MAX_INVENTORY_BYTES."""
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    with open(private_files.open_regular(path, follow=True), "rb") as handle:
        data = handle.read(MAX_INVENTORY_BYTES + 1)
    if len(data) > MAX_INVENTORY_BYTES:
        raise TooLarge(f"larger than {MAX_TEXT}, the most an inventory file may be")
    return data


def _decoded(data: bytes) -> str:
    """UTF-8, with or without a byte-order mark; UTF-16 when it starts with one (what
    `az vm list > vms.json` writes in Windows PowerShell 5)."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16")
    return data.decode("utf-8-sig")


def _failed(source: str, reason: str) -> SweepResult:
    return SweepResult(resources=(), failures=(SourceFailure(source=source, reason=reason),))


_SPACE = re.compile(r"[ \t\n\r]*")
_SEPARATOR = re.compile(r"[ \t\n\r]*,[ \t\n\r]*")  # between two entries of a list


def parse_inventory(
    document: Any, *, source: str, clouds: Clouds | None = None
) -> tuple[Resource, ...]:
    """Detect the producer of `document` and normalise its VMs."""
    return tuple(_parse_document(document, source, _parsers(clouds or installed_clouds())))


def _parsers(clouds: Clouds) -> list[ExportParser]:
    return [parser for cloud in clouds.available() for parser in cloud.export_parsers]


def _parse_document(document: Any, source: str, parsers: list[ExportParser]) -> Iterator[Resource]:
    if isinstance(document, list):
        yield from _list_entries(iter(document), source, parsers)
        return
    for parser in parsers:
        if parser.claims_document(document):
            yield from parser.parse_document(document, source)
            return
    expected = " or ".join(parser.description for parser in parsers)
    raise InventoryFormatError(
        f"not an inventory: expected {expected or 'an export of an installed adapter'}"
    )


def _parse_text(text: str, source: str, parsers: list[ExportParser]) -> Iterator[Resource]:
    start = _SPACE.match(text).end()  # type: ignore[union-attr]
    if text.startswith("[", start):
        yield from _list_entries(_array_items(text, start), source, parsers)
    else:
        yield from _parse_document(json_input.loads(text), source, parsers)


def _array_items(text: str, start: int) -> Iterator[Any]:
    """The entries of the JSON array at `text[start]`, decoded one at a time.

    As strict as `json.loads`: a missing comma, a trailing comma or anything
    after the closing bracket is a JSONDecodeError. The decoder's C scanner is
    called as `json_input.raw_decode` calls it, its errors converted here: two
    Python calls an entry fewer (0.04 s of a 100,000-VM export).
    """
    space = _SPACE.match
    index = space(text, start + 1).end()  # type: ignore[union-attr]
    if text.startswith("]", index):
        _end_of_document(text, index + 1)
        return
    scan, separator = json_input.scan_once, _SEPARATOR.match
    while True:
        try:
            item, index = scan(text, index)
        except StopIteration as stop:
            raise json.JSONDecodeError("Expecting value", text, stop.value) from None
        except json.JSONDecodeError:
            raise
        except (RecursionError, ValueError) as error:
            raise json_input.unreadable(error, text) from None
        yield item
        between = separator(text, index)
        if between is not None:
            index = between.end()
            continue
        index = space(text, index).end()  # type: ignore[union-attr]
        if text.startswith("]", index):
            _end_of_document(text, index + 1)
            return
        raise json.JSONDecodeError("Expecting ',' delimiter", text, index)


def _end_of_document(text: str, index: int) -> None:
    end = _SPACE.match(text, index).end()  # type: ignore[union-attr]
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)


def _list_entries(
    items: Iterator[Any], source: str, parsers: list[ExportParser]
) -> Iterator[Resource]:
    """A list's entries, each read by the one export parser that claims it."""
    last = parsers[0] if parsers else None
    for index, item in enumerate(items):
        # An export comes from one CLI: the parser of the previous entry is asked first.
        if last is None or not last.claims_entry(item):
            last = next((p for p in parsers if p.claims_entry(item)), None)
        if last is None:
            raise InventoryFormatError(
                f"entry {index} is not " + " nor ".join(p.entry_description for p in parsers)
            )
        try:
            yield from last.parse_entry(item, source)
        except InventoryFormatError as error:
            raise InventoryFormatError(f"entry {index}: {error}") from None

"""A cloud CLI's JSON export of VMs, read offline: the parser interface and its helpers.

The auditor's inventory reader (cloudguard.audit.inventory_files) streams a
file and hands each top-level list entry, or the whole document, to the
export parser of the installed adapter that claims it. Stdlib only.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from cloudguard.cloud.records import Resource


class InventoryFormatError(ValueError):
    """The document is JSON but no installed adapter's export we understand."""


class ExportParser(Protocol):
    """One CLI's JSON export of VMs, e.g. `az vm list -d -o json`.

    A top-level JSON list is read one entry at a time (a 100,000-VM export is
    never a tree in memory), so a parser claims entries; any other document is
    claimed whole. Claims of two parsers never overlap; a claimed entry that is
    malformed raises `InventoryFormatError` naming what is wrong.
    """

    description: str  # what the user runs to make it, for the "not an inventory" message
    entry_description: str  # what one list entry looks like, e.g. "an az VM object"

    def claims_entry(self, entry: Any) -> bool: ...

    def parse_entry(self, entry: Any, source: str) -> Iterable[Resource]: ...

    def claims_document(self, document: Any) -> bool: ...

    def parse_document(self, document: Any, source: str) -> Iterable[Resource]: ...


def interned(value: Any) -> str:
    """`value` as a string, one copy however many VMs carry it (for export parsers)."""
    return sys.intern("" if value is None else str(value))


_SCALARS = (str, int, float, bool)


def interned_tags(raw: Any, where: str = "tags") -> dict[str, str]:
    """A tag object (`{"name": "value"}`) with interned strings; {} for null (az prints
    `"tags": null` for an untagged VM). Anything else is an InventoryFormatError: tags
    that cannot be read must not make a fleet VM look untagged (and drop it unseen)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InventoryFormatError(
            f"{where}: expected an object of name: value, got {type_name(raw)}"
        )
    tags = {}
    intern = sys.intern
    for name, value in raw.items():
        # A JSON name and nearly every value are plain strings: interned as they are,
        # without a call of `interned` each (a 100,000-VM export has about 500,000).
        key = intern(name) if type(name) is str else interned(name)
        if type(value) is str:
            tags[key] = intern(value)
        elif value is None or isinstance(value, _SCALARS):
            tags[key] = interned(value)
        else:
            raise InventoryFormatError(
                f"{where}: the value of {name!r} is {type_name(value)}, not text"
            )
    return tags


def entry_field(entry: dict[str, Any], key: str, expected: type | tuple[type, ...]) -> Any:
    """`entry[key]` when it is of the `expected` type, None when absent or null; anything
    else is an InventoryFormatError naming the field (an export is read as its CLI
    prints it, never guessed from something else)."""
    value = entry.get(key)
    if value is None or isinstance(value, expected):
        return value
    raise InventoryFormatError(f"{key}: expected {_kind(expected)}, got {type_name(value)}")


def type_name(value: Any) -> str:
    """What a JSON value is, in JSON's words."""
    if value is None:
        return "null"
    names = {bool: "true/false", int: "a number", float: "a number", str: "text"}
    names |= {list: "a list", dict: "an object"}
    return next((name for kind, name in names.items() if isinstance(value, kind)), "a value")


def _kind(expected: type | tuple[type, ...]) -> str:
    kinds = expected if isinstance(expected, tuple) else (expected,)
    return " or ".join(type_name(kind()) for kind in kinds)


_EXCESS_FRACTION = re.compile(r"(\.\d{6})\d+")
_ZERO = timedelta(0)


def parse_time(value: Any) -> datetime | None:
    """ISO-8601 to aware UTC; None when absent or unparseable (age then unknown)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        # Azure writes 7 fractional digits, which some forms need cut to 6.
        try:
            parsed = datetime.fromisoformat(_EXCESS_FRACTION.sub(r"\1", value.strip()))
        except ValueError:
            return None
    if parsed.tzinfo is UTC:  # `+00:00`, as az and EC2 write it
        return parsed
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    if parsed.utcoffset() == _ZERO:
        return parsed  # already UTC (az and EC2 both write UTC): no conversion
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        return None  # year 1 east of UTC, or 9999 west of it: no time a VM was created

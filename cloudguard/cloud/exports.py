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


def interned_tags(raw: Any) -> dict[str, str]:
    """A tag object (`{"name": "value"}`) with interned strings; {} when it is not one
    (az prints `"tags": null` for an untagged VM)."""
    if not isinstance(raw, dict):
        return {}
    return {interned(k): interned(v) for k, v in raw.items()}


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
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    if parsed.utcoffset() == _ZERO:
        return parsed  # already UTC (az and EC2 both write UTC): no conversion
    return parsed.astimezone(UTC)

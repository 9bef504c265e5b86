"""`az vm list [--show-details] -o json`: the Azure CLI's export, read into `Resource` records.

The auditor's inventory reader (cloudguard.audit.inventory_files) streams a
top-level JSON list and hands each entry to the parser that claims it; an az
VM object is an entry with a string ARM `id`. Stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from cloudguard.cloud.exports import (
    InventoryFormatError,
    entry_field,
    interned,
    interned_tags,
    parse_time,
)
from cloudguard.cloud.records import Resource

# `az vm list --show-details` reports "VM running", "VM deallocated", ...
_AZURE_POWER = {
    "vm running": "running",
    "vm starting": "starting",
    "vm stopping": "stopping",
    "vm stopped": "stopped",
    "vm deallocating": "deallocating",
    "vm deallocated": "deallocated",
}

_ARM_ID = re.compile(
    r"^/subscriptions/(?P<sub>[^/]+)/resourceGroups/(?P<group>[^/]+)/", re.IGNORECASE
)


class AzCliExport:
    """`az vm list --show-details -o json`: a JSON list of VM objects."""

    description = "`az vm list --show-details -o json` (a JSON list)"
    entry_description = "an az VM object (no string `id`)"

    def claims_entry(self, entry: Any) -> bool:
        # An EC2 instance has `InstanceId` and no `id`: never both claimed.
        return isinstance(entry, dict) and isinstance(entry.get("id"), str)

    def parse_entry(self, entry: Any, source: str) -> Iterator[Resource]:
        yield vm_from_cli(entry, source)

    def claims_document(self, document: Any) -> bool:
        return False  # az prints a list, read entry by entry

    def parse_document(self, document: Any, source: str) -> Iterator[Resource]:
        raise InventoryFormatError("`az vm list` prints a JSON list")


def vm_from_cli(item: dict[str, Any], source: str) -> Resource:
    try:
        return _vm(item, source)
    except InventoryFormatError as error:
        name = item["id"].rsplit("/", 1)[-1] or "(no id)"
        raise InventoryFormatError(f"VM {name}: {error}") from None


def _vm(item: dict[str, Any], source: str) -> Resource:
    arm_id: str = item["id"]
    if not arm_id.strip():
        raise InventoryFormatError("id: empty")
    match = _ARM_ID.match(arm_id)
    subscription = match.group("sub") if match else ""
    group = entry_field(item, "resourceGroup", str) or (match.group("group") if match else "")
    hardware = entry_field(item, "hardwareProfile", dict) or {}
    # `az vm list` without -d prints no powerState at all: "unknown", whose cost is unknown.
    power = (entry_field(item, "powerState", str) or "").strip().lower()
    return Resource(
        provider="azure",
        account=interned(subscription),
        region=interned(entry_field(item, "location", str)),
        group=interned(group),
        id=arm_id,
        name=entry_field(item, "name", str) or arm_id.rsplit("/", 1)[-1],
        kind="vm",
        size=interned(entry_field(hardware, "vmSize", str)),
        power_state=_AZURE_POWER.get(power, "unknown"),
        created=parse_time(entry_field(item, "timeCreated", str)),
        tags=interned_tags(item.get("tags")),
        source=source,
        uid=entry_field(item, "vmId", str) or "",
    )

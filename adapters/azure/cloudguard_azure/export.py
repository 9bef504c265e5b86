"""The Azure CLI's exports, read into `Resource` records.

- `az vm list [--show-details] -o json`: VMs with their size and power state;
- `az resource list -o json` (and `az group list -o json`): every resource of
  any type, with ARM's `createdTime`;
- `az graph query -q "..." -o json`: Resource Graph rows (whole `Resources`
  rows or the engine's projection), every kind.

The auditor's inventory reader (cloudguard.audit.inventory_files) streams a
top-level JSON list and hands each entry to the parser that claims it: an az
VM object has a string `id` and a `hardwareProfile` (or no `type`), an az
resource object a string `id` and `type` and no `hardwareProfile`, so no
entry is claimed twice. `az graph query` prints one object with a `data` list.
Stdlib only.
"""

from __future__ import annotations

import re
import sys
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
from cloudguard_azure import generic, graph_rows, kinds

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
        # An EC2 instance has `InstanceId` and no `id`: never both claimed; an `az resource
        # list` entry has a `type` and no `hardwareProfile`; an ARM id is a path
        # (`/subscriptions/...`), a Compute Engine instance's `id` a number: never ours.
        return (
            isinstance(entry, dict)
            and isinstance(entry.get("id"), str)
            and not entry["id"].isdecimal()
            and ("hardwareProfile" in entry or "type" not in entry)
        )

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


_TEXT_OR_NULL = (str, type(None))


def _vm(item: dict[str, Any], source: str) -> Resource:
    """The VM `item` states. Each field az prints as text or null (the hardware profile an
    object) read in one pass, the record made in C: 100,000 VMs an export. Anything else
    is read by `_vm_checked`, which names the first field that is wrong."""
    arm_id: str = item["id"]
    get = item.get
    group, location, name, power = (
        get("resourceGroup"),
        get("location"),
        get("name"),
        get("powerState"),
    )
    created, uid, hardware = get("timeCreated"), get("vmId"), get("hardwareProfile")
    size = hardware.get("vmSize") if type(hardware) is dict else None
    if (
        not arm_id.strip()
        or (hardware is not None and type(hardware) is not dict)
        or type(group) not in _TEXT_OR_NULL
        or type(location) not in _TEXT_OR_NULL
        or type(name) not in _TEXT_OR_NULL
        or type(power) not in _TEXT_OR_NULL
        or type(created) not in _TEXT_OR_NULL
        or type(uid) not in _TEXT_OR_NULL
        or type(size) not in _TEXT_OR_NULL
    ):
        return _vm_checked(item, source)
    match = _ARM_ID.match(arm_id)
    intern = sys.intern
    return tuple.__new__(Resource, (  # Resource's fields in order
        "azure",
        intern(match.group("sub")) if match else "",
        intern(location or ""),
        intern(group or (match.group("group") if match else "")),
        arm_id,
        name or arm_id.rsplit("/", 1)[-1],
        "vm",
        intern(size or ""),
        _AZURE_POWER.get((power or "").strip().lower(), "unknown"),
        parse_time(created),
        interned_tags(get("tags")),
        source,
        uid or "",
    ))  # fmt: skip


def _vm_checked(item: dict[str, Any], source: str) -> Resource:
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


class AzResourceListExport:
    """`az resource list -o json` (and `az group list -o json`): every resource, any type."""

    description = "`az resource list -o json` (a JSON list)"
    entry_description = "an az resource object (string `id` and `type`)"

    def claims_entry(self, entry: Any) -> bool:
        return (
            isinstance(entry, dict)
            and isinstance(entry.get("id"), str)
            and isinstance(entry.get("type"), str)
            and "hardwareProfile" not in entry
        )

    def parse_entry(self, entry: Any, source: str) -> Iterator[Resource]:
        if generic.is_group(entry["type"]):
            yield generic.group_from_arm(entry, source)
        else:
            yield generic.resource_from_arm(entry, source)

    def claims_document(self, document: Any) -> bool:
        return False  # az prints a list, read entry by entry

    def parse_document(self, document: Any, source: str) -> Iterator[Resource]:
        raise InventoryFormatError("`az resource list` prints a JSON list")


class AzGraphQueryExport:
    """`az graph query -q "..." -o json`: `{"count", "data": [rows], "skip_token", ...}`.

    Rows need `id`, `type` and `subscriptionId` (a whole `Resources` row has them); a
    subscription's own row is skipped. A `skip_token` left in the document means more
    pages were not exported: refused, never read as the whole tenant."""

    description = '`az graph query -q "resources | union resourcecontainers" -o json`'
    entry_description = "a Resource Graph row"

    def claims_entry(self, entry: Any) -> bool:
        return False  # az prints one object, not a list

    def parse_entry(self, entry: Any, source: str) -> Iterator[Resource]:
        raise InventoryFormatError("`az graph query` prints one object with a data list")

    def claims_document(self, document: Any) -> bool:
        return (
            isinstance(document, dict)
            and isinstance(document.get("data"), list)
            and any(k in document for k in ("total_records", "totalRecords", "count"))
        )

    def parse_document(self, document: Any, source: str) -> Iterator[Resource]:
        token = document.get("skip_token") or document.get("$skipToken")
        if token:
            raise InventoryFormatError(
                "a page of a longer answer (skip_token is set): export every page "
                "(az graph query --first 1000 --skip-token ...) and give each"
            )
        for index, row in enumerate(document["data"]):
            if not isinstance(row, dict) or not all(
                isinstance(row.get(k), str) for k in ("id", "type", "subscriptionId")
            ):
                raise InventoryFormatError(
                    f"data[{index}] is not a Resource Graph row with string id, type and "
                    "subscriptionId (project them in the query)"
                )
            if row["type"].casefold() == kinds.SUBSCRIPTION_TYPE:
                continue
            yield graph_rows.row_resource(graph_rows.projected(row), row["subscriptionId"], source)

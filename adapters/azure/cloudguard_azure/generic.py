"""Any ARM resource -> a `Resource`: what every engine and export says of every kind.

Three spellings of one resource meet here: ARM's `resources.list` item
(GenericResourceExpanded, with `$expand=createdTime,changedTime`), the same
item as `az resource list -o json` prints it, and a row of Resource Graph's
`resources` / `resourcecontainers` tables. VMs and managed disks keep their
richer readers (normalise.py: power state, size, the unique id reaping binds
to); everything else is read here alike. Stdlib only.

Identity: ARM ids are names, so a resource deleted and re-created under its
name has the same id. What tells them apart is a unique id where the type
has one in its properties (`resourceGuid`, `uniqueId`, `vmId`) and the
creation time ARM records (`createdTime`); a plan binds both where known.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from cloudguard.cloud import kinds as cloud_kinds
from cloudguard.cloud.exports import parse_time
from cloudguard.cloud.records import Resource
from cloudguard_azure import kinds
from cloudguard_azure.normalise import disk_size, group_of

# Where a type keeps a unique id of this very resource, first found wins.
UNIQUE_ID_PROPERTIES = ("resourceGuid", "uniqueId", "vmId")


def subscription_of(arm_id: str) -> str:
    parts = arm_id.split("/")
    return parts[2] if len(parts) > 2 and parts[1].casefold() == "subscriptions" else ""


def unique_id(properties: Any) -> str:
    """The unique id a resource's properties carry, or ""."""
    if not isinstance(properties, Mapping):
        return ""
    return next((str(properties[k]) for k in UNIQUE_ID_PROPERTIES if properties.get(k)), "")


def sku_text(sku: Any) -> str:
    """`{"name": "Standard", "tier": "Regional"}` -> "Standard Regional"; "" when absent."""
    if not isinstance(sku, Mapping):
        return ""
    name, tier = str(sku.get("name") or ""), str(sku.get("tier") or "")
    return f"{name} {tier}".strip() if tier and tier != name else name


def tags_of(raw: Any) -> dict[str, str]:
    if not isinstance(raw, Mapping):
        return {}
    return {sys.intern(str(k)): sys.intern(str(v)) for k, v in raw.items()}


def resource_from_arm(item: Mapping[str, Any], source: str) -> Resource:
    """One ARM resource (a `resources.list` item, an `az resource list` entry)."""
    arm_id = str(item["id"])
    return Resource(
        provider="azure",
        account=sys.intern(subscription_of(arm_id)),
        region=sys.intern(str(item.get("location") or "")),
        group=sys.intern(group_of(arm_id)),
        id=arm_id,
        name=str(item.get("name") or arm_id.rsplit("/", 1)[-1]),
        kind=kinds.kind_of(str(item.get("type") or "")),
        size=_size(item),
        power_state="unknown",  # only a VM has one, and its own listing reads it
        created=parse_time(item.get("createdTime")),
        tags=tags_of(item.get("tags")),
        source=sys.intern(source),
        uid=unique_id(item.get("properties")),
    )


def _size(item: Mapping[str, Any]) -> str:
    """The SKU; a managed disk's with its size where the entry has one (`az disk list`
    prints `diskSizeGb`, an ARM item `properties.diskSizeGB`): its tier is priced by both."""
    sku = sku_text(item.get("sku"))
    if kinds.kind_of(str(item.get("type") or "")) != cloud_kinds.DISK:
        return sku
    # A disk by its SKU's name alone (`Premium_LRS`, not `Premium_LRS Premium`), as its
    # own listing reads it.
    raw = item.get("sku")
    sku = str(raw.get("name") or "") if isinstance(raw, Mapping) else ""
    properties = item.get("properties")
    size_gb = properties.get("diskSizeGB") if isinstance(properties, Mapping) else None
    return disk_size(sku, size_gb if size_gb is not None else item.get("diskSizeGb"))


def group_from_arm(item: Mapping[str, Any], source: str) -> Resource:
    """One resource group (`resourceGroups.list`, `az group list`, a resourcecontainers row).

    A group records no creation time and no unique id: what it is, for reaping, is what
    it holds (see the reaper)."""
    arm_id = str(item["id"])
    name = str(item.get("name") or arm_id.rsplit("/", 1)[-1])
    return Resource(
        provider="azure",
        account=sys.intern(subscription_of(arm_id)),
        region=sys.intern(str(item.get("location") or "")),
        group=name,
        id=arm_id,
        name=name,
        kind=kinds.RESOURCE_GROUP_KIND,
        size="",
        power_state="unknown",
        created=None,
        tags=tags_of(item.get("tags")),
        source=sys.intern(source),
    )


def is_group(arm_type: str) -> bool:
    """ARM spells a group's type Microsoft.Resources/resourceGroups; Resource Graph
    microsoft.resources/subscriptions/resourcegroups."""
    return arm_type.casefold() in kinds.GROUP_TYPES

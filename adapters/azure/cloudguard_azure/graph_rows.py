"""Resource Graph rows -> `Resource` records: the engine's projected rows and `az graph query`'s.

The engine projects a few columns of every row (resource_graph.py's queries);
`az graph query -q "Resources"` prints whole rows, their `properties` nested.
Both read here alike: a VM with the power state of its extended instance view,
a disk with its unique id, a group as a group, anything else as any ARM
resource (generic.py). The records match the ARM engine's for the same
resource, so both engines and an export give the same verdicts. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, NamedTuple

from cloudguard.cloud import kinds
from cloudguard.cloud.records import Resource
from cloudguard_azure import generic, normalise
from cloudguard_azure import kinds as azure_kinds


class _Status(NamedTuple):
    code: str  # an instance-view status code, e.g. PowerState/running


def projected(row: Mapping[str, Any]) -> dict[str, Any]:
    """A whole row (`properties` nested, `sku` an object) as the engine projects it."""
    properties = row.get("properties")
    if not isinstance(properties, Mapping):
        return dict(row)
    view = ((properties.get("extended") or {}).get("instanceView") or {}).get("powerState") or {}
    sku: Mapping[str, Any] = row["sku"] if isinstance(row.get("sku"), Mapping) else {}
    return {
        **row,
        "sku": sku.get("name") or "",
        "skuTier": sku.get("tier") or "",
        "vmSize": (properties.get("hardwareProfile") or {}).get("vmSize") or "",
        "timeCreated": properties.get("timeCreated") or "",
        "uniqueId": generic.unique_id(properties),
        "diskState": properties.get("diskState") or "",
        "diskSizeGB": properties.get("diskSizeGB"),
        "powerState": view.get("code") or "",
    }


def _created(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return normalise.utc(moment if moment.tzinfo else moment.replace(tzinfo=UTC))


def _tags(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in (value or {}).items()}


def vm_resource(row: Mapping[str, Any], subscription: str, source: str = "") -> Resource:
    arm_id = str(row["id"])
    return Resource(
        provider="azure",
        account=subscription,
        region=str(row.get("location") or ""),
        group=normalise.group_of(arm_id),
        id=arm_id,
        name=str(row.get("name") or arm_id.rsplit("/", 1)[-1]),
        kind="vm",
        size=str(row.get("vmSize") or ""),
        power_state=normalise.power_state((_Status(str(row.get("powerState") or "")),)),
        created=_created(row.get("timeCreated")),
        tags=_tags(row.get("tags")),
        source=source or f"azure:{subscription}",
        uid=str(row.get("vmId") or row.get("uniqueId") or ""),  # what `reap` binds an item to
    )


def disk_resource(row: Mapping[str, Any], subscription: str, source: str = "") -> Resource:
    arm_id = str(row["id"])
    return Resource(
        provider="azure",
        account=subscription,
        region=str(row.get("location") or ""),
        group=normalise.group_of(arm_id),
        id=arm_id,
        name=str(row.get("name") or ""),
        kind="disk",
        size=normalise.disk_size(str(row.get("sku") or ""), row.get("diskSizeGB")),
        power_state="unknown",  # a disk has no power state; it bills while it exists
        created=_created(row.get("timeCreated")),
        tags=_tags(row.get("tags")),
        source=source or f"azure:{subscription}",
        uid=str(row.get("uniqueId") or ""),
    )


def row_resource(row: Mapping[str, Any], subscription: str, source: str = "") -> Resource:
    """A row of any type: a VM or a disk read as their own engines read them, a group as a
    group, anything else alike."""
    arm_type = str(row.get("type") or "")
    kind = azure_kinds.kind_of(arm_type)
    if kind == kinds.VM:
        return vm_resource(row, subscription, source)
    if kind == kinds.DISK:
        return disk_resource(row, subscription, source)
    source = source or f"azure:{subscription}"
    if generic.is_group(arm_type):
        return generic.group_from_arm(row, source)._replace(account=subscription)
    found = generic.resource_from_arm(
        {**row, "sku": {"name": row.get("sku"), "tier": row.get("skuTier")}}, source
    )
    return found._replace(
        account=subscription,
        created=_created(row.get("timeCreated")),
        uid=str(row.get("uniqueId") or ""),
    )

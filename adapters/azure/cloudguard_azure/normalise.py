"""azure-mgmt-compute models -> `Resource` records.

Two readers of the same fields: the sweep's (`vm_from_arm`, `disk_from_arm`)
take the REST API's JSON items as listed, without building the SDK's model
tree (the sweep's CPU cost per VM); the reaper's (`vm_resource`,
`disk_resource`) take the SDK's deserialized models of one GET. Both mirror
the offline `az vm list` reader in cloudguard.audit.inventory_files: the
same VM gives the same Resource whichever path it came by (a test holds
the two readers to that).
"""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime
from typing import Any

from cloudguard.cloud.exports import parse_time
from cloudguard.cloud.records import Resource

_ARM_ID = re.compile(
    r"^/subscriptions/(?P<sub>[^/]+)/resourceGroups/(?P<group>[^/]+)/", re.IGNORECASE
)

# `PowerState/<x>` codes ARM reports in an instance view.
_POWER = {
    "running": "running",
    "starting": "starting",
    "stopping": "stopping",
    "stopped": "stopped",
    "deallocating": "deallocating",
    "deallocated": "deallocated",
}


def text(value: Any) -> str:
    """A model field as plain text: the SDK returns str-enums (DiskState.UNATTACHED) whose
    str() is the member name, not the wire value."""
    if value is None:
        return ""
    return str(getattr(value, "value", value))


def group_of(arm_id: str) -> str:
    match = _ARM_ID.match(arm_id or "")
    return match.group("group") if match else ""


def power_state(statuses: Any) -> str:
    """The normalised power state from instance-view statuses; "unknown" when absent."""
    for status in statuses or ():
        code = text(getattr(status, "code", None))
        prefix, _, value = code.partition("/")
        if prefix.lower() == "powerstate":
            return _POWER.get(value.lower(), "unknown")
    return "unknown"


def utc(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def vm_resource(vm: Any, subscription: str) -> Resource:
    view = getattr(vm, "instance_view", None)
    hardware = getattr(vm, "hardware_profile", None)
    return Resource(
        provider="azure",
        account=subscription,
        region=str(vm.location or ""),
        group=group_of(vm.id),
        id=str(vm.id),
        name=str(vm.name or str(vm.id).rsplit("/", 1)[-1]),
        kind="vm",
        size=text(getattr(hardware, "vm_size", None)),
        power_state=power_state(getattr(view, "statuses", None)),
        created=utc(getattr(vm, "time_created", None)),
        tags={str(k): str(v) for k, v in (vm.tags or {}).items()},
        source=f"azure:{subscription}",
        uid=text(getattr(vm, "vm_id", None)),
    )


def is_unattached(disk: Any) -> bool:
    """A managed disk attached to nothing: no `managedBy`, and not Attached/Reserved."""
    if getattr(disk, "managed_by", None):
        return False
    state = text(getattr(disk, "disk_state", None))
    return state.lower() in ("", "unattached")


def disk_size(sku: str, size_gb: Any) -> str:
    """`Premium_LRS 128 GiB`: the SKU and the size a managed disk is priced by (its tier
    follows from both, cloudguard_azure.prices); the SKU alone when the size is unknown."""
    if isinstance(size_gb, int | float) and not isinstance(size_gb, bool) and size_gb > 0:
        return f"{sku} {int(size_gb)} GiB".strip()
    return sku


def disk_resource(disk: Any, subscription: str) -> Resource:
    sku = getattr(disk, "sku", None)
    return Resource(
        provider="azure",
        account=subscription,
        region=str(disk.location or ""),
        group=group_of(disk.id),
        id=str(disk.id),
        name=str(disk.name or ""),
        kind="disk",
        size=disk_size(text(getattr(sku, "name", None)), getattr(disk, "disk_size_gb", None)),
        power_state="unknown",  # a disk has no power state; it bills while it exists
        created=utc(getattr(disk, "time_created", None)),
        tags={str(k): str(v) for k, v in (disk.tags or {}).items()},
        source=f"azure:{subscription}",
        uid=text(getattr(disk, "unique_id", None)),
    )


# -- the sweep's reader: ARM JSON items ------------------------------------------------


def vm_from_arm(item: dict[str, Any], subscription: str, source: str) -> Resource:
    """One item of VirtualMachines_ListAll (statusOnly=true) as a Resource.

    Strings that repeat across a fleet are interned: a sweep of 100,000 VMs holds
    each region, group, size, tag key and tag value once.
    """
    arm_id = str(item["id"])
    properties = item.get("properties") or {}
    view = properties.get("instanceView") or {}
    return Resource(
        provider="azure",
        account=sys.intern(subscription),
        region=sys.intern(str(item.get("location") or "")),
        group=sys.intern(group_of(arm_id)),
        id=arm_id,
        name=str(item.get("name") or arm_id.rsplit("/", 1)[-1]),
        kind="vm",
        size=sys.intern(str((properties.get("hardwareProfile") or {}).get("vmSize") or "")),
        power_state=_json_power_state(view.get("statuses")),
        created=parse_time(properties.get("timeCreated")),
        tags=_json_tags(item.get("tags")),
        source=sys.intern(source),
        uid=str(properties.get("vmId") or ""),
    )


def is_unattached_arm(item: dict[str, Any]) -> bool:
    """As `is_unattached`, for a Disks_List item."""
    if item.get("managedBy"):
        return False
    state = str((item.get("properties") or {}).get("diskState") or "")
    return state.lower() in ("", "unattached")


def disk_from_arm(item: dict[str, Any], subscription: str, source: str) -> Resource:
    arm_id = str(item["id"])
    properties = item.get("properties") or {}
    return Resource(
        provider="azure",
        account=subscription,
        region=str(item.get("location") or ""),
        group=group_of(arm_id),
        id=arm_id,
        name=str(item.get("name") or ""),
        kind="disk",
        size=disk_size(
            str((item.get("sku") or {}).get("name") or ""), properties.get("diskSizeGB")
        ),
        power_state="unknown",
        created=parse_time(properties.get("timeCreated")),
        tags=_json_tags(item.get("tags")),
        source=source,
        uid=str(properties.get("uniqueId") or ""),
    )


def _json_power_state(statuses: Any) -> str:
    for status in statuses or ():
        prefix, _, value = str(status.get("code") or "").partition("/")
        if prefix.lower() == "powerstate":
            return _POWER.get(value.lower(), "unknown")
    return "unknown"


def _json_tags(raw: Any) -> dict[str, str]:
    if not isinstance(raw, dict):
        return {}
    return {sys.intern(str(k)): sys.intern(str(v)) for k, v in raw.items()}

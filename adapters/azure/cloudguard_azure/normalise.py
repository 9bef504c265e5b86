"""azure-mgmt-compute models -> `Resource` records.

Takes the SDK's deserialized models (attribute access only), so it is as
strict or lenient as the SDK itself. Mirrors the offline `az vm list`
reader in cloudguard.audit.inventory_files: the same VM gives the same
Resource whichever path it came by.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from cloudguard.audit.model import Resource

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
    )


def is_unattached(disk: Any) -> bool:
    """A managed disk attached to nothing: no `managedBy`, and not Attached/Reserved."""
    if getattr(disk, "managed_by", None):
        return False
    state = text(getattr(disk, "disk_state", None))
    return state.lower() in ("", "unattached")


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
        size=text(getattr(sku, "name", None)),
        power_state="unknown",  # a disk has no power state; it bills while it exists
        created=utc(getattr(disk, "time_created", None)),
        tags={str(k): str(v) for k, v in (disk.tags or {}).items()},
        source=f"azure:{subscription}",
    )

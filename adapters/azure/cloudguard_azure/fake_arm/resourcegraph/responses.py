"""What Microsoft.ResourceGraph answers for each query shape cloudguard's engine sends: rows.

The fake does not run KQL: each known query (compared with whitespace folded)
is a `Shape` that selects state records, orders and projects them as the real
service would. The shapes are learned here on purpose, not imported from the
engine: a query the fake has not learned is a failing test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cloudguard_azure.fake_arm import inventory
from cloudguard_azure.fake_arm.inventory import Listed
from cloudguard_azure.fake_arm.wire import arm_time

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.compute.models import VirtualMachine
    from cloudguard_azure.fake_arm.resources.models import Subscription
    from cloudguard_azure.fake_arm.routing import Context

Row = dict[str, Any]


def normalised(query: str) -> str:
    return " ".join(query.split())


def _subscriptions(ctx: Context, subs: set[str]) -> list[Subscription]:
    return [s for s in ctx.state.subscriptions.values() if s.id.casefold() in subs]


def _subscription_row(sub: Subscription) -> Row:
    return {"subscriptionId": sub.id}


def _vms(ctx: Context, subs: set[str]) -> list[VirtualMachine]:
    return [vm for vm in ctx.state.vms.values() if vm.subscription.casefold() in subs]


def _vm_row(vm: VirtualMachine) -> Row:
    return {
        "id": vm.id,
        "name": vm.name,
        "location": vm.location,
        "subscriptionId": vm.subscription.lower(),  # Resource Graph's ids are lower-case
        "tags": dict(vm.tags),
        "vmSize": vm.size,
        "timeCreated": arm_time(vm.time_created),
        "vmId": vm.vm_id,
        "powerState": f"PowerState/{vm.power_state}" if vm.power_state else "",
    }


def _everything(ctx: Context, subs: set[str]) -> list[Any]:
    """The subscriptions, their resource groups, and every resource in them."""
    found: list[Any] = []
    for sub in _subscriptions(ctx, subs):
        found.append(sub)
        found += [(sub, group) for group in sub.groups.values()]
    return found + inventory.resources_of(ctx.state, subs)


def _id_of(record: Any) -> str:
    if isinstance(record, tuple):
        sub, group = record
        return f"/subscriptions/{sub.id}/resourceGroups/{group.name}"
    if isinstance(record, Listed):
        return record.id
    return f"/subscriptions/{record.id}"


def _text(value: Any) -> str:
    if value is None:
        return ""
    return arm_time(value) if isinstance(value, datetime) else str(value)


def _union_row(record: Any) -> Row:
    """One row of the union of resourcecontainers and resources, as the engine projects it
    (Resource Graph's types are lower-case; an absent property projects as "")."""
    row: Row = dict.fromkeys(_UNION_COLUMNS, "")
    if isinstance(record, tuple):
        sub, group = record
        row.update(id=_id_of(record), name=group.name, location=group.location,
                   type="microsoft.resources/subscriptions/resourcegroups",
                   subscriptionId=sub.id.lower(), resourceGroup=group.name.lower(),
                   tags=dict(group.tags))  # fmt: skip
        return row
    if not isinstance(record, Listed):
        row.update(id=_id_of(record), name=record.display_name, tags=dict(record.tags),
                   type="microsoft.resources/subscriptions",
                   subscriptionId=record.id.lower())  # fmt: skip
        return row
    properties = record.properties
    power = properties.get("powerState")
    row.update(
        id=record.id, name=record.name, type=record.type.lower(), location=record.location,
        subscriptionId=record.subscription.lower(), resourceGroup=record.group.lower(),
        tags=dict(record.tags), managedBy=record.managed_by or "",
        sku=(record.sku or {}).get("name", ""), skuTier=(record.sku or {}).get("tier", ""),
        vmSize=_text(properties.get("vmSize")), timeCreated=_text(properties.get("timeCreated")),
        uniqueId=_text(properties.get("vmId") or properties.get("uniqueId")
                       or properties.get("resourceGuid")),
        diskState=_text(properties.get("diskState")),
        diskSizeGB=properties.get("diskSizeGB", ""),
        powerState=f"PowerState/{power}" if power else "",
    )  # fmt: skip
    return row


_UNION_COLUMNS = (
    "id", "name", "type", "location", "subscriptionId", "resourceGroup", "tags", "managedBy",
    "sku", "skuTier", "vmSize", "timeCreated", "uniqueId", "diskState", "diskSizeGB",
    "powerState",
)  # fmt: skip


@dataclass(frozen=True)
class Shape:
    name: str
    select: Callable[[Context, set[str]], list[Any]]  # the matching records
    order: Callable[[Any], str]  # the query's `order by`
    render: Callable[[Any], Row]  # its `project`


# The shapes the fake answers: the engine's queries, learned here on purpose (not imported).
SHAPES: dict[str, Shape] = {
    normalised(text): shape
    for text, shape in [
        (
            "resourcecontainers | where type =~ 'microsoft.resources/subscriptions' "
            "| project subscriptionId | order by subscriptionId asc",
            Shape("subscriptions", _subscriptions, lambda s: s.id.casefold(), _subscription_row),
        ),
        (
            "resources | where type =~ 'microsoft.compute/virtualmachines' "
            "| project id, name, location, subscriptionId, tags, "
            "vmSize = tostring(properties.hardwareProfile.vmSize), "
            "timeCreated = tostring(properties.timeCreated), "
            "vmId = tostring(properties.vmId), "
            "powerState = tostring(properties.extended.instanceView.powerState.code) "
            "| order by id asc",
            Shape("vms", _vms, lambda vm: vm.id.casefold(), _vm_row),
        ),
        (
            "resourcecontainers | where type =~ 'microsoft.resources/subscriptions' "
            "or type =~ 'microsoft.resources/subscriptions/resourcegroups' | union resources "
            "| project id, name, type, location, subscriptionId, resourceGroup, tags, managedBy, "
            "sku = tostring(sku.name), skuTier = tostring(sku.tier), "
            "vmSize = tostring(properties.hardwareProfile.vmSize), "
            "timeCreated = tostring(properties.timeCreated), "
            "uniqueId = coalesce(tostring(properties.vmId), tostring(properties.uniqueId), "
            "tostring(properties.resourceGuid)), "
            "diskState = tostring(properties.diskState), "
            "diskSizeGB = toint(properties.diskSizeGB), "
            "powerState = tostring(properties.extended.instanceView.powerState.code) "
            "| order by id asc",
            Shape("everything", _everything, lambda r: _id_of(r).casefold(), _union_row),
        ),
    ]
}

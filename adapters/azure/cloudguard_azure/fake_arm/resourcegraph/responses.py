"""What Microsoft.ResourceGraph answers for each query shape cloudguard's engine sends: rows.

The fake does not run KQL: each known query (compared with whitespace folded)
is a `Shape` that selects state records, orders and projects them as the real
service would. The shapes are learned here on purpose, not imported from the
engine: a query the fake has not learned is a failing test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cloudguard_azure.fake_arm.wire import arm_time

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.compute.models import ManagedDisk, VirtualMachine
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


def _unattached_disks(ctx: Context, subs: set[str]) -> list[ManagedDisk]:
    return [
        d
        for d in ctx.state.disks.values()
        if d.subscription.casefold() in subs and not d.managed_by
    ]


def _disk_row(disk: ManagedDisk) -> Row:
    return {
        "id": disk.id,
        "name": disk.name,
        "location": disk.location,
        "subscriptionId": disk.subscription.lower(),
        "tags": dict(disk.tags),
        "skuName": disk.sku,
        "diskState": disk.disk_state,
        "timeCreated": arm_time(disk.time_created),
        "uniqueId": disk.unique_id,
    }


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
            "resources | where type =~ 'microsoft.compute/disks' | where isempty(managedBy) "
            "| project id, name, location, subscriptionId, tags, "
            "skuName = tostring(sku.name), diskState = tostring(properties.diskState), "
            "timeCreated = tostring(properties.timeCreated), "
            "uniqueId = tostring(properties.uniqueId) | order by id asc",
            Shape("disks", _unattached_disks, lambda d: d.id.casefold(), _disk_row),
        ),
    ]
}

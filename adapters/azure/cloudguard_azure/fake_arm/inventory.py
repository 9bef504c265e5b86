"""What Microsoft.Resources (and Resource Graph) list of every provider's records.

`resources.list` and Resource Graph's `resources` table see every resource of
a subscription whatever its provider: the VMs and disks of `compute/`, the
NICs and public IPs of `network/`, and the resources of other types kept in
`resources/` (a storage account, a managed cluster). Each is seen here as a
`Listed` record, the fields those listings carry (`properties` only for Resource
Graph and a read by id: `resources.list` does not return them); nothing here
knows HTTP.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cloudguard_azure.fake_arm.resources.models import EPOCH

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.state import ArmState


@dataclass(frozen=True)
class Listed:
    id: str
    name: str
    type: str  # as ARM spells it: Microsoft.Compute/virtualMachines
    subscription: str
    group: str
    location: str
    tags: dict[str, str]
    created: datetime
    sku: dict[str, str] | None = None
    kind: str | None = None
    managed_by: str | None = None
    properties: dict[str, Any] = field(default_factory=dict)


def resources_in(state: ArmState, subscription: str, group: str | None = None) -> list[Listed]:
    """Every resource of the subscription (or of one group), in id order."""
    wanted_group = (group or "").casefold()
    return [
        listed
        for listed in resources_of(state, {subscription.casefold()})
        if group is None or listed.group.casefold() == wanted_group
    ]


def resources_of(state: ArmState, subscriptions: set[str]) -> list[Listed]:
    """Every resource of these subscriptions (casefolded ids), in id order, in one pass."""
    with state.lock:
        found = [r for r in _everything(state) if r.subscription.casefold() in subscriptions]
    return sorted(found, key=lambda listed: listed.id.casefold())


def _everything(state: ArmState) -> list[Listed]:
    listed = [
        Listed(vm.id, vm.name, "Microsoft.Compute/virtualMachines", vm.subscription, vm.group,
               vm.location, dict(vm.tags), vm.time_created,
               properties={"vmId": vm.vm_id, "timeCreated": vm.time_created,
                           "vmSize": vm.size, "powerState": vm.power_state})
        for vm in state.vms.values()
    ]  # fmt: skip
    listed += [
        Listed(d.id, d.name, "Microsoft.Compute/disks", d.subscription, d.group, d.location,
               dict(d.tags), d.time_created, sku={"name": d.sku, "tier": "Premium"},
               managed_by=d.managed_by,
               properties={"uniqueId": d.unique_id, "timeCreated": d.time_created,
                           "diskState": d.disk_state, "diskSizeGB": d.size_gb})
        for d in state.disks.values()
    ]  # fmt: skip
    listed += [
        Listed(n.id, n.name, "Microsoft.Network/networkInterfaces", n.subscription, n.group,
               n.location, dict(n.tags), n.created, properties={"resourceGuid": n.resource_guid})
        for n in state.nics.values()
    ]  # fmt: skip
    listed += [
        Listed(a.id, a.name, "Microsoft.Network/publicIPAddresses", a.subscription, a.group,
               a.location, dict(a.tags), a.created, sku={"name": "Standard", "tier": "Regional"},
               properties={"resourceGuid": a.resource_guid})
        for a in state.public_ips.values()
    ]  # fmt: skip
    listed += [
        Listed(g.id, g.name, g.arm_type, g.subscription, g.group, g.location, dict(g.tags),
               g.created, sku=g.sku, kind=g.kind, managed_by=g.managed_by,
               properties=dict(g.properties))
        for g in state.generic.values()
    ]  # fmt: skip
    return listed


__all__ = ["EPOCH", "Listed", "resources_in", "resources_of"]

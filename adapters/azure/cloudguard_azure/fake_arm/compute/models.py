"""Microsoft.Compute's state: virtual machines and managed disks, and what ARM does to them.

Plain data and the few transitions ARM performs (deallocate, delete a VM,
delete a disk), each of which may be made to fail; what a VM's delete does
to its NICs is Microsoft.Network's (network/models.py). Nothing here knows
about HTTP or JSON: `responses.py` renders these records and `urls.py` maps
requests onto them, as moto splits `models` from `responses` and `urls`.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from cloudguard_azure.fake_arm import operations
from cloudguard_azure.fake_arm.network import models as network
from cloudguard_azure.fake_arm.resources.models import DEFAULT_LOCATION, EPOCH

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.operations import Operation
    from cloudguard_azure.fake_arm.state import ArmState


def arm_id(subscription: str, group: str, kind: str, name: str) -> str:
    return (
        f"/subscriptions/{subscription}/resourceGroups/{group}"
        f"/providers/Microsoft.Compute/{kind}/{name}"
    )


@dataclass
class VirtualMachine:
    subscription: str
    group: str
    name: str
    size: str
    location: str
    power_state: str  # ARM's suffix of `PowerState/...`: running, deallocated, stopped, ...
    tags: dict[str, str]
    time_created: datetime
    provisioning_state: str = "Succeeded"
    vm_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    # What a delete leaves behind (reaping reports it): attached data disks' ARM ids, and
    # the NIC's deleteOption ("Delete": it goes with the VM; "Detach": it stays, billing).
    data_disks: list[str] = field(default_factory=list)
    nic_delete_option: str = "Delete"

    @property
    def id(self) -> str:
        return arm_id(self.subscription, self.group, "virtualMachines", self.name)


@dataclass
class ManagedDisk:
    subscription: str
    group: str
    name: str
    sku: str
    size_gb: int
    location: str
    tags: dict[str, str]
    time_created: datetime
    managed_by: str | None = None  # the owning VM's ARM id; None when attached to nothing
    disk_state: str = "Unattached"  # Unattached | Attached | Reserved | ActiveSAS ...
    unique_id: str = field(default_factory=lambda: str(uuid.uuid4()))  # ARM's `uniqueId`

    @property
    def id(self) -> str:
        return arm_id(self.subscription, self.group, "disks", self.name)


# -- seeding -----------------------------------------------------------------------------


def add_vm(
    state: ArmState,
    subscription_id: str,
    group: str,
    name: str,
    *,
    size: str = "Standard_D2as_v5",
    power_state: str = "running",
    tags: Mapping[str, str] | None = None,
    time_created: datetime | None = None,
    location: str | None = None,
    provisioning_state: str = "Succeeded",
) -> VirtualMachine:
    with state.lock:
        rg = state.add_group(subscription_id, group, location or DEFAULT_LOCATION)
        vm = VirtualMachine(
            subscription=state.subscription(subscription_id).id,  # type: ignore[union-attr]
            group=rg.name,
            name=name,
            size=size,
            location=location or rg.location,
            power_state=power_state,
            tags=dict(tags or {}),
            time_created=time_created or EPOCH,
            provisioning_state=provisioning_state,
        )
        state.vms[vm.id.casefold()] = vm
        return vm


def add_disk(
    state: ArmState,
    subscription_id: str,
    group: str,
    name: str,
    *,
    sku: str = "Premium_LRS",
    size_gb: int = 128,
    tags: Mapping[str, str] | None = None,
    managed_by: str | None = None,
    time_created: datetime | None = None,
    location: str | None = None,
) -> ManagedDisk:
    with state.lock:
        rg = state.add_group(subscription_id, group, location or DEFAULT_LOCATION)
        disk = ManagedDisk(
            subscription=state.subscription(subscription_id).id,  # type: ignore[union-attr]
            group=rg.name,
            name=name,
            sku=sku,
            size_gb=size_gb,
            location=location or rg.location,
            tags=dict(tags or {}),
            time_created=time_created or EPOCH,
            managed_by=managed_by,
            disk_state="Attached" if managed_by else "Unattached",
        )
        state.disks[disk.id.casefold()] = disk
        return disk


def seed_fleet(
    state: ArmState,
    subscriptions: Iterable[str],
    groups_per_subscription: int,
    vms_per_group: int,
    *,
    tags: Mapping[str, str] | None = None,
    power_states: tuple[str, ...] = ("running", "deallocated", "stopped"),
) -> int:
    """Bulk seeding for paging tests and benchmarks. Returns the number of VMs made."""
    states = itertools.cycle(power_states)
    made = 0
    for sub in subscriptions:
        for g in range(groups_per_subscription):
            for v in range(vms_per_group):
                add_vm(
                    state,
                    sub,
                    f"rg-{g:03d}",
                    f"vm-{g:03d}-{v:04d}",
                    power_state=next(states),
                    tags={**(tags or {}), "index": str(made)},
                    time_created=EPOCH - timedelta(minutes=made),
                )
                made += 1
    return made


# -- reads -------------------------------------------------------------------------------


def vms_in(state: ArmState, subscription_id: str, group: str | None = None) -> list[VirtualMachine]:
    """VMs in a stable order, so `$skiptoken` offsets page consistently."""
    with state.lock:
        found = [
            vm
            for vm in state.vms.values()
            if vm.subscription.casefold() == subscription_id.casefold()
            and (group is None or vm.group.casefold() == group.casefold())
        ]
    return sorted(found, key=lambda vm: vm.id.casefold())


def disks_in(state: ArmState, subscription_id: str, group: str | None = None) -> list[ManagedDisk]:
    with state.lock:
        found = [
            d
            for d in state.disks.values()
            if d.subscription.casefold() == subscription_id.casefold()
            and (group is None or d.group.casefold() == group.casefold())
        ]
    return sorted(found, key=lambda d: d.id.casefold())


def vm(state: ArmState, subscription_id: str, group: str, name: str) -> VirtualMachine | None:
    return state.vms.get(arm_id(subscription_id, group, "virtualMachines", name).casefold())


def disk(state: ArmState, subscription_id: str, group: str, name: str) -> ManagedDisk | None:
    return state.disks.get(arm_id(subscription_id, group, "disks", name).casefold())


# -- long-running operations ---------------------------------------------------------------


def begin_deallocate(
    state: ArmState, vm: VirtualMachine, error: tuple[str, str] | None = None
) -> Operation:
    before = vm.power_state
    vm.power_state = "deallocating"

    def finish() -> None:
        vm.power_state = "deallocated"

    def undo() -> None:
        vm.power_state = before

    return operations.begin(state, vm.location, finish, error, undo)


def begin_delete(
    state: ArmState, vm: VirtualMachine, error: tuple[str, str] | None = None
) -> Operation:
    before = vm.provisioning_state
    vm.provisioning_state = "Deleting"

    def finish() -> None:
        with state.lock:
            state.vms.pop(vm.id.casefold(), None)
            # ARM detaches the VM's data disks on delete; they then bill unattached.
            for disk in state.disks.values():
                if disk.managed_by and disk.managed_by.casefold() == vm.id.casefold():
                    disk.managed_by = None
                    disk.disk_state = "Unattached"
            network.vm_deleted(state, vm)  # and deletes or detaches its NICs (deleteOption)

    def undo() -> None:
        vm.provisioning_state = before

    return operations.begin(state, vm.location, finish, error, undo)


def begin_delete_disk(
    state: ArmState, disk: ManagedDisk, error: tuple[str, str] | None = None
) -> Operation:
    def finish() -> None:
        with state.lock:
            state.disks.pop(disk.id.casefold(), None)

    return operations.begin(state, disk.location, finish, error)


# -- what reaping needs: attachment, a VM re-created under its name -----------------------


def attach_disk(state: ArmState, vm: VirtualMachine, disk: ManagedDisk) -> None:
    with state.lock:
        disk.managed_by = vm.id
        disk.disk_state = "Attached"
        vm.data_disks.append(disk.id)


def recreate_vm(state: ArmState, vm: VirtualMachine, created: datetime) -> VirtualMachine:
    """Delete `vm` and create another under the same name and tags: a new vmId and time."""
    with state.lock:
        state.vms.pop(vm.id.casefold(), None)
        return add_vm(
            state,
            vm.subscription,
            vm.group,
            vm.name,
            size=vm.size,
            power_state="running",
            tags=dict(vm.tags),
            time_created=created,
            location=vm.location,
        )

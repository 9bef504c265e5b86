"""The fake ARM's state model: subscriptions, resource groups, VMs, managed disks.

Plain data and the few state transitions ARM performs (deallocate, delete
a VM, delete a disk), each of which may be made to fail.
Nothing here knows about HTTP or JSON: `wire.py` renders these records in
the REST API's shapes and `routes.py` maps requests onto them, as moto
splits `models` from `responses` and `urls`.
"""

from __future__ import annotations

import itertools
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.network import NetworkInterface, PublicIp

DEFAULT_LOCATION = "westeurope"
_EPOCH = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


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


@dataclass
class ResourceGroup:
    name: str
    location: str
    tags: dict[str, str] = field(default_factory=dict)


@dataclass
class Subscription:
    id: str
    display_name: str
    tenant_id: str
    groups: dict[str, ResourceGroup] = field(default_factory=dict)  # key: casefolded name
    tags: dict[str, str] = field(default_factory=dict)


@dataclass
class ManagementLock:
    """A management lock at a scope (subscription, group or resource ARM id)."""

    scope: str
    name: str
    level: str  # CanNotDelete | ReadOnly
    notes: str = ""

    @property
    def id(self) -> str:
        return f"{self.scope}/providers/Microsoft.Authorization/locks/{self.name}"


@dataclass
class Operation:
    """A long-running operation (deallocate/delete) that completes after N polls."""

    id: str
    location: str
    started: datetime
    polls_left: int
    finish: Callable[[], None]  # applied once, when the operation succeeds
    status: str = "InProgress"
    ended: datetime | None = None
    # Set when the operation is to fail: (ARM error code, message). `undo` then
    # puts back what `begin_*` changed, as ARM leaves a VM whose deallocate failed.
    error: tuple[str, str] | None = None
    undo: Callable[[], None] | None = None


class ArmState:
    """Everything the fake serves. Thread-safe: the server is threaded."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.subscriptions: dict[str, Subscription] = {}
        self.vms: dict[str, VirtualMachine] = {}  # key: casefolded ARM id
        self.disks: dict[str, ManagedDisk] = {}
        self.operations: dict[str, Operation] = {}
        self.locks: list[ManagementLock] = []  # Microsoft.Authorization/locks, any scope
        # Microsoft.Network (fake_arm/network.py): a VM's NICs and public IPs, by casefolded id.
        self.nics: dict[str, NetworkInterface] = {}
        self.public_ips: dict[str, PublicIp] = {}
        # How many polls an LRO stays InProgress: 1 shows the SDK really polls.
        self.polls_until_done = 1

    # -- seeding ---------------------------------------------------------------

    def add_subscription(
        self, subscription_id: str, display_name: str = "", tenant_id: str = ""
    ) -> Subscription:
        with self.lock:
            sub = Subscription(
                subscription_id,
                display_name or f"subscription {subscription_id[:8]}",
                tenant_id or "72f988bf-86f1-41af-91ab-2d7cd011db47",
            )
            self.subscriptions[subscription_id.casefold()] = sub
            return sub

    def add_group(
        self, subscription_id: str, name: str, location: str = DEFAULT_LOCATION
    ) -> ResourceGroup:
        with self.lock:
            sub = self.subscription(subscription_id)
            if sub is None:
                sub = self.add_subscription(subscription_id)
            group = sub.groups.get(name.casefold())
            if group is None:
                group = sub.groups[name.casefold()] = ResourceGroup(name, location)
            return group

    def add_vm(
        self,
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
        with self.lock:
            rg = self.add_group(subscription_id, group, location or DEFAULT_LOCATION)
            vm = VirtualMachine(
                subscription=self.subscription(subscription_id).id,  # type: ignore[union-attr]
                group=rg.name,
                name=name,
                size=size,
                location=location or rg.location,
                power_state=power_state,
                tags=dict(tags or {}),
                time_created=time_created or _EPOCH,
                provisioning_state=provisioning_state,
            )
            self.vms[vm.id.casefold()] = vm
            return vm

    def add_disk(
        self,
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
        with self.lock:
            rg = self.add_group(subscription_id, group, location or DEFAULT_LOCATION)
            disk = ManagedDisk(
                subscription=self.subscription(subscription_id).id,  # type: ignore[union-attr]
                group=rg.name,
                name=name,
                sku=sku,
                size_gb=size_gb,
                location=location or rg.location,
                tags=dict(tags or {}),
                time_created=time_created or _EPOCH,
                managed_by=managed_by,
                disk_state="Attached" if managed_by else "Unattached",
            )
            self.disks[disk.id.casefold()] = disk
            return disk

    def seed_fleet(
        self,
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
                    self.add_vm(
                        sub,
                        f"rg-{g:03d}",
                        f"vm-{g:03d}-{v:04d}",
                        power_state=next(states),
                        tags={**(tags or {}), "index": str(made)},
                        time_created=_EPOCH - timedelta(minutes=made),
                    )
                    made += 1
        return made

    # -- reads -----------------------------------------------------------------

    def subscription(self, subscription_id: str) -> Subscription | None:
        return self.subscriptions.get(subscription_id.casefold())

    def vms_in(self, subscription_id: str, group: str | None = None) -> list[VirtualMachine]:
        """VMs in a stable order, so `$skiptoken` offsets page consistently."""
        with self.lock:
            found = [
                vm
                for vm in self.vms.values()
                if vm.subscription.casefold() == subscription_id.casefold()
                and (group is None or vm.group.casefold() == group.casefold())
            ]
        return sorted(found, key=lambda vm: vm.id.casefold())

    def disks_in(self, subscription_id: str, group: str | None = None) -> list[ManagedDisk]:
        with self.lock:
            found = [
                d
                for d in self.disks.values()
                if d.subscription.casefold() == subscription_id.casefold()
                and (group is None or d.group.casefold() == group.casefold())
            ]
        return sorted(found, key=lambda d: d.id.casefold())

    def vm(self, subscription_id: str, group: str, name: str) -> VirtualMachine | None:
        return self.vms.get(arm_id(subscription_id, group, "virtualMachines", name).casefold())

    def disk(self, subscription_id: str, group: str, name: str) -> ManagedDisk | None:
        return self.disks.get(arm_id(subscription_id, group, "disks", name).casefold())

    # -- long-running operations -------------------------------------------------

    def begin_deallocate(
        self, vm: VirtualMachine, error: tuple[str, str] | None = None
    ) -> Operation:
        before = vm.power_state
        vm.power_state = "deallocating"

        def finish() -> None:
            vm.power_state = "deallocated"

        def undo() -> None:
            vm.power_state = before

        return self._begin(vm.location, finish, error, undo)

    def begin_delete(self, vm: VirtualMachine, error: tuple[str, str] | None = None) -> Operation:
        before = vm.provisioning_state
        vm.provisioning_state = "Deleting"

        def finish() -> None:
            with self.lock:
                self.vms.pop(vm.id.casefold(), None)
                # ARM detaches the VM's data disks on delete; they then bill unattached.
                for disk in self.disks.values():
                    if disk.managed_by and disk.managed_by.casefold() == vm.id.casefold():
                        disk.managed_by = None
                        disk.disk_state = "Unattached"
                from cloudguard_azure.fake_arm.network import vm_deleted

                vm_deleted(self, vm)  # and deletes or detaches its NICs (deleteOption)

        def undo() -> None:
            vm.provisioning_state = before

        return self._begin(vm.location, finish, error, undo)

    def begin_delete_disk(
        self, disk: ManagedDisk, error: tuple[str, str] | None = None
    ) -> Operation:
        def finish() -> None:
            with self.lock:
                self.disks.pop(disk.id.casefold(), None)

        return self._begin(disk.location, finish, error)

    def _begin(
        self,
        location: str,
        finish: Callable[[], None],
        error: tuple[str, str] | None = None,
        undo: Callable[[], None] | None = None,
    ) -> Operation:
        with self.lock:
            op = Operation(
                id=str(uuid.uuid4()),
                location=location,
                started=datetime.now(UTC),
                polls_left=self.polls_until_done,
                finish=finish,
                error=error,
                undo=undo,
            )
            self.operations[op.id] = op
            if op.polls_left <= 0:
                self._complete(op)
            return op

    def poll(self, operation_id: str) -> Operation | None:
        """One poll of an operation: advances it, as time would on real ARM."""
        with self.lock:
            op = self.operations.get(operation_id)
            if op is None or op.status != "InProgress":
                return op
            op.polls_left -= 1
            if op.polls_left <= 0:
                self._complete(op)
            return op

    def _complete(self, op: Operation) -> None:
        if op.error is not None:
            if op.undo is not None:
                op.undo()
            op.status = "Failed"
        else:
            op.finish()
            op.status = "Succeeded"
        op.ended = datetime.now(UTC)


# -- what reaping needs: locks, attachment, a VM re-created under its name ------------------


def add_lock(state: ArmState, scope: str, name: str, level: str = "CanNotDelete") -> ManagementLock:
    with state.lock:
        lock = ManagementLock(scope.rstrip("/"), name, level)
        state.locks.append(lock)
        return lock


def locks_at(state: ArmState, scope: str) -> list[ManagementLock]:
    """Locks at `scope` and at the scopes above it (ARM lists inherited locks too)."""
    wanted = scope.rstrip("/").casefold()
    with state.lock:
        return [
            lock
            for lock in state.locks
            if wanted == lock.scope.casefold() or wanted.startswith(lock.scope.casefold() + "/")
        ]


def attach_disk(state: ArmState, vm: VirtualMachine, disk: ManagedDisk) -> None:
    with state.lock:
        disk.managed_by = vm.id
        disk.disk_state = "Attached"
        vm.data_disks.append(disk.id)


def recreate_vm(state: ArmState, vm: VirtualMachine, created: datetime) -> VirtualMachine:
    """Delete `vm` and create another under the same name and tags: a new vmId and time."""
    with state.lock:
        state.vms.pop(vm.id.casefold(), None)
        return state.add_vm(
            vm.subscription,
            vm.group,
            vm.name,
            size=vm.size,
            power_state="running",
            tags=dict(vm.tags),
            time_created=created,
            location=vm.location,
        )

"""Microsoft.Network's state: network interfaces and public IP addresses.

Only what reaping a VM's dependents reads and changes, and what a VM's delete
does to its NIC (`deleteOption` Delete: deleted with it; Detach: left,
attached to nothing). A NIC's attachment is its VM's ARM id; a public IP's,
the NIC IP configuration's id.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from cloudguard_azure.fake_arm.resources.models import EPOCH

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.compute.models import VirtualMachine
    from cloudguard_azure.fake_arm.state import ArmState

NETWORK = "/providers/Microsoft.Network"
IP_CONFIGURATION = "ipconfig1"


def network_id(subscription: str, group: str, kind: str, name: str) -> str:
    return f"/subscriptions/{subscription}/resourceGroups/{group}{NETWORK}/{kind}/{name}"


@dataclass
class NetworkInterface:
    subscription: str
    group: str
    name: str
    location: str
    tags: dict[str, str]
    virtual_machine: str | None = None  # the VM's ARM id; None when attached to nothing
    public_ip: str | None = None  # the public IP on its one IP configuration
    resource_guid: str = field(default_factory=lambda: str(uuid.uuid4()))
    created: datetime = EPOCH  # ARM's createdTime (Microsoft.Network itself records none)

    @property
    def id(self) -> str:
        return network_id(self.subscription, self.group, "networkInterfaces", self.name)


@dataclass
class PublicIp:
    subscription: str
    group: str
    name: str
    location: str
    tags: dict[str, str]
    ip_configuration: str | None = None  # the NIC IP configuration's id; None: unattached
    address: str = "20.61.15.7"
    resource_guid: str = field(default_factory=lambda: str(uuid.uuid4()))
    created: datetime = EPOCH  # ARM's createdTime (Microsoft.Network itself records none)

    @property
    def id(self) -> str:
        return network_id(self.subscription, self.group, "publicIPAddresses", self.name)


def add_nic(
    state: ArmState,
    vm: VirtualMachine,
    *,
    tags: dict[str, str] | None = None,
    public_ip: bool = True,
    ip_tags: dict[str, str] | None = None,
) -> NetworkInterface:
    """`vm`'s NIC (`<vm>-nic`, the id the VM's networkProfile names), with a public IP."""
    with state.lock:
        nic = NetworkInterface(
            vm.subscription, vm.group, f"{vm.name}-nic", vm.location, dict(tags or {}), vm.id
        )
        if public_ip:
            address = PublicIp(
                vm.subscription,
                vm.group,
                f"{vm.name}-ip",
                vm.location,
                dict(ip_tags if ip_tags is not None else (tags or {})),
                f"{nic.id}/ipConfigurations/{IP_CONFIGURATION}",
            )
            state.public_ips[address.id.casefold()] = address
            nic.public_ip = address.id
        state.nics[nic.id.casefold()] = nic
        return nic


def attach_nic(state: ArmState, nic: NetworkInterface, vm: VirtualMachine) -> None:
    with state.lock:
        nic.virtual_machine = vm.id


def vm_deleted(state: ArmState, vm: VirtualMachine) -> None:
    """What ARM does to a deleted VM's NICs: delete them with it, or detach them."""
    with state.lock:
        for nic in list(state.nics.values()):
            if nic.virtual_machine is None or nic.virtual_machine.casefold() != vm.id.casefold():
                continue
            if vm.nic_delete_option.casefold() == "delete":
                remove_nic(state, nic)
            else:
                nic.virtual_machine = None


def remove_nic(state: ArmState, nic: NetworkInterface) -> None:
    state.nics.pop(nic.id.casefold(), None)
    # A public IP outlives its NIC, attached to nothing: it bills on.
    address = state.public_ips.get((nic.public_ip or "").casefold())
    if address is not None:
        address.ip_configuration = None


def remove_public_ip(state: ArmState, address: PublicIp) -> None:
    state.public_ips.pop(address.id.casefold(), None)


def nic(state: ArmState, sub: str, group: str, name: str) -> NetworkInterface | None:
    return state.nics.get(network_id(sub, group, "networkInterfaces", name).casefold())


def public_ip(state: ArmState, sub: str, group: str, name: str) -> PublicIp | None:
    return state.public_ips.get(network_id(sub, group, "publicIPAddresses", name).casefold())

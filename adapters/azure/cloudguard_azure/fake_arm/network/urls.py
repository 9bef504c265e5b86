"""The fake ARM's Microsoft.Network: network interfaces and public IP addresses.

Only what reaping a VM's dependents reads and changes: GET and DELETE (a
long-running operation, as ARM answers it: 202 with Azure-AsyncOperation and
Location) of a NIC and of a public IP, and what a VM's delete does to its NIC
(`deleteOption` Delete: deleted with it; Detach: left, attached to nothing).
The attachment is shown as the REST API shows it (api-version 2024-05-01
examples NetworkInterfaceGet.json, PublicIpAddressGet.json): a NIC's
`properties.virtualMachine.id`, a public IP's `properties.ipConfiguration.id`
(the NIC's IP configuration). ARM refuses to delete a NIC attached to a VM
(`NicInUse`) or a public IP on an IP configuration (`PublicIPAddressInUse`).
State, shapes and routes sit together here, in moto's split: state records,
then `wire` shapes, then routes.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cloudguard_azure.fake_arm.routes import (
    Context,
    Request,
    Response,
    _scope_missing,
    arm_error,
    json_response,
    not_found,
    route,
)
from cloudguard_azure.fake_arm.wire import Json, async_operation

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.state import ArmState, Operation, VirtualMachine

_NETWORK = "/providers/Microsoft.Network"
_SUB = r"/subscriptions/(?P<sub>[^/]+)"
_RG = _SUB + r"/resourceGroups/(?P<group>[^/]+)"
IP_CONFIGURATION = "ipconfig1"


def network_id(subscription: str, group: str, kind: str, name: str) -> str:
    return f"/subscriptions/{subscription}/resourceGroups/{group}{_NETWORK}/{kind}/{name}"


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

    @property
    def id(self) -> str:
        return network_id(self.subscription, self.group, "publicIPAddresses", self.name)


# -- state ---------------------------------------------------------------------------


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
                _remove_nic(state, nic)
            else:
                nic.virtual_machine = None


def _remove_nic(state: ArmState, nic: NetworkInterface) -> None:
    state.nics.pop(nic.id.casefold(), None)
    # A public IP outlives its NIC, attached to nothing: it bills on.
    address = state.public_ips.get((nic.public_ip or "").casefold())
    if address is not None:
        address.ip_configuration = None


def nic(state: ArmState, sub: str, group: str, name: str) -> NetworkInterface | None:
    return state.nics.get(network_id(sub, group, "networkInterfaces", name).casefold())


def public_ip(state: ArmState, sub: str, group: str, name: str) -> PublicIp | None:
    return state.public_ips.get(network_id(sub, group, "publicIPAddresses", name).casefold())


# -- wire shapes ---------------------------------------------------------------------


def nic_json(nic: NetworkInterface) -> Json:
    """NetworkInterfaces_Get: attachment in `properties.virtualMachine`."""
    configuration: Json = {
        "name": IP_CONFIGURATION,
        "id": f"{nic.id}/ipConfigurations/{IP_CONFIGURATION}",
        "properties": {
            "provisioningState": "Succeeded",
            "privateIPAddress": "10.0.0.4",
            "privateIPAllocationMethod": "Dynamic",
            "subnet": {
                "id": f"/subscriptions/{nic.subscription}/resourceGroups/{nic.group}"
                f"{_NETWORK}/virtualNetworks/fleet-vnet/subnets/default"
            },
            "primary": True,
            "privateIPAddressVersion": "IPv4",
        },
    }
    if nic.public_ip:
        configuration["properties"]["publicIPAddress"] = {"id": nic.public_ip}
    properties: Json = {
        "provisioningState": "Succeeded",
        "resourceGuid": nic.resource_guid,
        "ipConfigurations": [configuration],
        "dnsSettings": {"dnsServers": [], "appliedDnsServers": []},
        "enableAcceleratedNetworking": False,
        "enableIPForwarding": False,
        "primary": True,
        "nicType": "Standard",
    }
    if nic.virtual_machine:
        properties["virtualMachine"] = {"id": nic.virtual_machine}
    return {
        "name": nic.name,
        "id": nic.id,
        "type": "Microsoft.Network/networkInterfaces",
        "location": nic.location,
        "tags": dict(nic.tags),
        "properties": properties,
    }


def public_ip_json(address: PublicIp) -> Json:
    """PublicIPAddresses_Get: attachment in `properties.ipConfiguration`."""
    properties: Json = {
        "provisioningState": "Succeeded",
        "resourceGuid": address.resource_guid,
        "ipAddress": address.address,
        "publicIPAddressVersion": "IPv4",
        "publicIPAllocationMethod": "Static",
        "idleTimeoutInMinutes": 4,
        "ipTags": [],
    }
    if address.ip_configuration:
        properties["ipConfiguration"] = {"id": address.ip_configuration}
    return {
        "name": address.name,
        "id": address.id,
        "type": "Microsoft.Network/publicIPAddresses",
        "location": address.location,
        "tags": dict(address.tags),
        "sku": {"name": "Standard", "tier": "Regional"},
        "properties": properties,
    }


# -- routes --------------------------------------------------------------------------


@route("GET", "nic_get", _RG + _NETWORK + r"/networkInterfaces/(?P<name>[^/]+)")
def get_nic(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    if missing := _scope_missing(ctx, sub, group):
        return missing
    found = nic(ctx.state, sub, group, name)
    if found is None:
        return not_found("Microsoft.Network/networkInterfaces", name, group)
    return json_response(200, nic_json(found))


@route("DELETE", "nic_delete", _RG + _NETWORK + r"/networkInterfaces/(?P<name>[^/]+)")
def delete_nic(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    found = nic(ctx.state, sub, group, name)
    if found is None:
        return Response(204)
    if found.virtual_machine:
        return arm_error(
            400,
            "NicInUse",
            f"Network Interface {found.id} is used by existing resource "
            f"{found.virtual_machine}. In order to delete the network interface, it must be "
            "dissociated from the resource.",
        )

    def finish() -> None:
        with ctx.state.lock:
            _remove_nic(ctx.state, found)

    failure = ctx.faults.take_operation_failure(req.path)
    return _accepted(req, sub, ctx.state._begin(found.location, finish, failure))


@route("GET", "public_ip_get", _RG + _NETWORK + r"/publicIPAddresses/(?P<name>[^/]+)")
def get_public_ip(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    if missing := _scope_missing(ctx, sub, group):
        return missing
    found = public_ip(ctx.state, sub, group, name)
    if found is None:
        return not_found("Microsoft.Network/publicIPAddresses", name, group)
    return json_response(200, public_ip_json(found))


@route("DELETE", "public_ip_delete", _RG + _NETWORK + r"/publicIPAddresses/(?P<name>[^/]+)")
def delete_public_ip(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    found = public_ip(ctx.state, sub, group, name)
    if found is None:
        return Response(204)
    if found.ip_configuration:
        return arm_error(
            400,
            "PublicIPAddressInUse",
            f"Public IP address {found.id} can not be deleted since it is still allocated to "
            f"resource {found.ip_configuration}.",
        )

    def finish() -> None:
        with ctx.state.lock:
            ctx.state.public_ips.pop(found.id.casefold(), None)

    failure = ctx.faults.take_operation_failure(req.path)
    return _accepted(req, sub, ctx.state._begin(found.location, finish, failure))


@route(
    "GET",
    "network_operation",
    _SUB + _NETWORK + r"/locations/(?P<location>[^/]+)/(?P<kind>operations|operationResults)"
    r"/(?P<op>[^/]+)",
)
def poll_network_operation(
    ctx: Context, req: Request, sub: str, location: str, kind: str, op: str
) -> Response:
    operation = ctx.state.poll(op)
    if operation is None:
        return arm_error(404, "NotFound", f"The operation '{op}' was not found.")
    if kind.casefold() == "operationresults":
        # The Location URL: 202 while running, then 204 (a delete has no final body).
        if operation.status == "InProgress":
            return Response(202, b"", {"Location": f"{req.base_url}{req.path}", "Retry-After": "0"})
        return Response(204)
    return json_response(200, async_operation(operation))


def _accepted(req: Request, sub: str, op: Operation) -> Response:
    """202 as Microsoft.Network sends it for a delete: Azure-AsyncOperation and Location."""
    api = req.query.get("api-version", "")
    base = f"{req.base_url}/subscriptions/{sub}{_NETWORK}/locations/{op.location}"
    return Response(
        202,
        b"",
        {
            "Azure-AsyncOperation": f"{base}/operations/{op.id}?api-version={api}",
            "Location": f"{base}/operationResults/{op.id}?api-version={api}",
            "Retry-After": "0",
        },
    )

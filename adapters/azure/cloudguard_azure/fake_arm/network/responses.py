"""Microsoft.Network's JSON shapes (api-version 2024-05-01 examples NetworkInterfaceGet.json,
PublicIpAddressGet.json): a NIC's attachment in `properties.virtualMachine`, a public IP's in
`properties.ipConfiguration`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cloudguard_azure.fake_arm.network.models import IP_CONFIGURATION, NETWORK
from cloudguard_azure.fake_arm.wire import Json

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.network.models import NetworkInterface, PublicIp


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
                f"{NETWORK}/virtualNetworks/fleet-vnet/subnets/default"
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

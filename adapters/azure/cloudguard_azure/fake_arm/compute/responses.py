"""JSON shapes of the ARM REST API, rendered from the state model.

Field names and nesting follow the azure-rest-api-specs examples for
Microsoft.Compute (VirtualMachines_ListAll / _List / _InstanceView / _Get,
Disks_List) and Microsoft.Resources (Subscriptions_List, ResourceGroups_List).
The real azure-mgmt-* clients deserialize every one of these in the tests,
which is the proof that the shapes are right.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from cloudguard_azure.fake_arm.state import (
    ManagedDisk,
    ManagementLock,
    Operation,
    ResourceGroup,
    Subscription,
    VirtualMachine,
)

Json = dict[str, Any]

# ARM's displayStatus for each PowerState code, as `az vm get-instance-view` shows them.
_POWER_DISPLAY = {
    "running": "VM running",
    "starting": "VM starting",
    "stopping": "VM stopping",
    "stopped": "VM stopped",
    "deallocating": "VM deallocating",
    "deallocated": "VM deallocated",
}


def arm_time(moment: datetime) -> str:
    """ARM's form: seven fractional digits and an offset, 2016-12-28T04:41:35.9278721+00:00."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f") + "0+00:00"


def subscription(sub: Subscription) -> Json:
    return {
        "id": f"/subscriptions/{sub.id}",
        "subscriptionId": sub.id,
        "tenantId": sub.tenant_id,
        "displayName": sub.display_name,
        "state": "Enabled",
        "subscriptionPolicies": {
            "locationPlacementId": "Public_2014-09-01",
            "quotaId": "PayAsYouGo_2014-09-01",
            "spendingLimit": "Off",
        },
        "authorizationSource": "RoleBased",
        "managedByTenants": [],
        "tags": dict(sub.tags),
    }


def resource_group(sub: Subscription, group: ResourceGroup) -> Json:
    return {
        "id": f"/subscriptions/{sub.id}/resourceGroups/{group.name}",
        "name": group.name,
        "type": "Microsoft.Resources/resourceGroups",
        "location": group.location,
        "tags": dict(group.tags),
        "properties": {"provisioningState": "Succeeded"},
    }


def instance_view_statuses(vm: VirtualMachine) -> list[Json]:
    provisioning = vm.provisioning_state
    statuses: list[Json] = [
        {
            "code": f"ProvisioningState/{provisioning.lower()}",
            "level": "Info",
            "displayStatus": f"Provisioning {provisioning.lower()}",
            "time": arm_time(vm.time_created),
        }
    ]
    if vm.power_state:
        statuses.append(
            {
                "code": f"PowerState/{vm.power_state}",
                "level": "Info",
                "displayStatus": _POWER_DISPLAY.get(vm.power_state, f"VM {vm.power_state}"),
            }
        )
    return statuses


def instance_view(vm: VirtualMachine) -> Json:
    """GET .../virtualMachines/{vm}/instanceView (VirtualMachines_InstanceView)."""
    return {
        "computerName": vm.name,
        "osName": "ubuntu",
        "osVersion": "24.04",
        "hyperVGeneration": "V2",
        "vmAgent": {
            "vmAgentVersion": "2.13.1.1",
            "statuses": [
                {
                    "code": "ProvisioningState/succeeded",
                    "level": "Info",
                    "displayStatus": "Ready",
                    "message": "Guest Agent is running",
                    "time": arm_time(vm.time_created),
                }
            ],
        },
        "disks": [
            {
                "name": _os_disk_name(vm),
                "statuses": [
                    {
                        "code": "ProvisioningState/succeeded",
                        "level": "Info",
                        "displayStatus": "Provisioning succeeded",
                        "time": arm_time(vm.time_created),
                    }
                ],
            }
        ],
        "statuses": instance_view_statuses(vm),
    }


def virtual_machine(vm: VirtualMachine, *, with_status: bool = False) -> Json:
    """One VM as listed or fetched. `with_status` adds `properties.instanceView`, as
    ListAll does for `statusOnly=true` and List/Get do for `$expand=instanceView`."""
    sub, group = vm.subscription, vm.group
    properties: Json = {
        "vmId": vm.vm_id,
        "hardwareProfile": {"vmSize": vm.size},
        "storageProfile": {
            "imageReference": {
                "publisher": "Canonical",
                "offer": "ubuntu-24_04-lts",
                "sku": "server",
                "version": "latest",
                "exactVersion": "24.04.202601050",
            },
            "osDisk": {
                "osType": "Linux",
                "name": _os_disk_name(vm),
                "createOption": "FromImage",
                "caching": "ReadWrite",
                "managedDisk": {
                    "storageAccountType": "Premium_LRS",
                    "id": f"/subscriptions/{sub}/resourceGroups/{group}"
                    f"/providers/Microsoft.Compute/disks/{_os_disk_name(vm)}",
                },
                "deleteOption": "Delete",
                "diskSizeGB": 30,
            },
            "dataDisks": data_disks(vm),
            "diskControllerType": "SCSI",
        },
        "osProfile": {
            "computerName": vm.name,
            "adminUsername": "azureuser",
            "linuxConfiguration": {
                "disablePasswordAuthentication": True,
                "provisionVMAgent": True,
                "patchSettings": {"patchMode": "ImageDefault", "assessmentMode": "ImageDefault"},
            },
            "secrets": [],
            "allowExtensionOperations": True,
            "requireGuestProvisionSignal": True,
        },
        "networkProfile": {
            "networkInterfaces": [
                {
                    "id": f"/subscriptions/{sub}/resourceGroups/{group}"
                    f"/providers/Microsoft.Network/networkInterfaces/{vm.name}-nic",
                    "properties": {"deleteOption": vm.nic_delete_option},
                }
            ]
        },
        "provisioningState": vm.provisioning_state,
        "timeCreated": arm_time(vm.time_created),
    }
    if with_status:
        properties["instanceView"] = {
            "computerName": vm.name,
            "osName": "ubuntu",
            "osVersion": "24.04",
            "statuses": instance_view_statuses(vm),
        }
    return {
        "name": vm.name,
        "id": vm.id,
        "type": "Microsoft.Compute/virtualMachines",
        "location": vm.location,
        "tags": dict(vm.tags),
        "properties": properties,
    }


def disk(d: ManagedDisk) -> Json:
    """One managed disk (Disks_List). ARM omits `managedBy` for a disk attached to nothing."""
    body: Json = {
        "name": d.name,
        "id": d.id,
        "type": "Microsoft.Compute/disks",
        "location": d.location,
        "tags": dict(d.tags),
        "sku": {"name": d.sku, "tier": "Premium" if d.sku.startswith("Premium") else "Standard"},
        "properties": {
            "osType": "Linux",
            "hyperVGeneration": "V2",
            "creationData": {"createOption": "Empty"},
            "diskSizeGB": d.size_gb,
            "diskSizeBytes": d.size_gb * 1024**3,
            "uniqueId": d.unique_id,
            "encryption": {"type": "EncryptionAtRestWithPlatformKey"},
            "networkAccessPolicy": "AllowAll",
            "publicNetworkAccess": "Enabled",
            "timeCreated": arm_time(d.time_created),
            "provisioningState": "Succeeded",
            "diskState": d.disk_state,
        },
    }
    if d.managed_by:
        body["managedBy"] = d.managed_by
    return body


def page(values: list[Json], next_link: str | None) -> Json:
    body: Json = {"value": values}
    if next_link:
        body["nextLink"] = next_link
    return body


def async_operation(op: Operation) -> Json:
    """The Azure-AsyncOperation status body."""
    body: Json = {"startTime": arm_time(op.started), "status": op.status, "name": op.id}
    if op.ended is not None:
        body["endTime"] = arm_time(op.ended)
    if op.status == "Failed" and op.error is not None:
        body["error"] = {"code": op.error[0], "message": op.error[1]}
    return body


def error(code: str, message: str) -> Json:
    """ARM's error envelope (CloudError)."""
    return {"error": {"code": code, "message": message}}


def encode(body: Json) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


def _os_disk_name(vm: VirtualMachine) -> str:
    return f"{vm.name}_OsDisk_1_{vm.vm_id.replace('-', '')}"


# -- what reaping reads: attached data disks, management locks ------------------------------


def data_disks(vm: VirtualMachine) -> list[Json]:
    """`storageProfile.dataDisks`: attached managed disks, kept when the VM is deleted."""
    return [
        {
            "lun": lun,
            "name": disk_id.rsplit("/", 1)[-1],
            "createOption": "Attach",
            "caching": "None",
            "managedDisk": {"storageAccountType": "Premium_LRS", "id": disk_id},
            "deleteOption": "Detach",
            "diskSizeGB": 128,
            "toBeDetached": False,
        }
        for lun, disk_id in enumerate(vm.data_disks)
    ]


def management_lock(lock: ManagementLock) -> Json:
    """One lock (ManagementLocks_ListByScope, api-version 2020-05-01)."""
    return {
        "id": lock.id,
        "type": "Microsoft.Authorization/locks",
        "name": lock.name,
        "properties": {"level": lock.level, "notes": lock.notes, "owners": []},
    }

"""Microsoft.Compute's JSON shapes, rendered from its state model.

Field names and nesting follow the azure-rest-api-specs examples
(VirtualMachines_ListAll / _List / _InstanceView / _Get, Disks_List). The
real azure-mgmt-compute client deserializes every one of these in the tests,
which is the proof that the shapes are right.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cloudguard_azure.fake_arm.wire import Json, arm_time

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.compute.models import ManagedDisk, VirtualMachine

# ARM's displayStatus for each PowerState code, as `az vm get-instance-view` shows them.
_POWER_DISPLAY = {
    "running": "VM running",
    "starting": "VM starting",
    "stopping": "VM stopping",
    "stopped": "VM stopped",
    "deallocating": "VM deallocating",
    "deallocated": "VM deallocated",
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


def _os_disk_name(vm: VirtualMachine) -> str:
    return f"{vm.name}_OsDisk_1_{vm.vm_id.replace('-', '')}"


# -- what reaping reads: attached data disks ------------------------------------------------


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

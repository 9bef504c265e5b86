"""A test run that provisioned real infrastructure and left it all behind, in the fake ARM.

One resource group made by the run, tagged with its run id like everything in it: a VM
with its OS and data disks, its NIC and public IP, a storage account and a Kubernetes
cluster. `--leaked-by ci-run=<RUN>` must find every one of them; the group itself is a
finding of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from cloudguard_azure.fake_arm import ArmState
from cloudguard_azure.fake_arm.compute.models import VirtualMachine, attach_disk
from cloudguard_azure.fake_arm.network.models import NetworkInterface, PublicIp, add_nic
from cloudguard_azure.fake_arm.resources.models import GenericResource

RUN = "ci-run-77"
TASK = "cloud-noenv-c7"


@dataclass
class LeakedRun:
    subscription: str
    group: str
    vm: VirtualMachine
    nic: NetworkInterface
    public_ip: PublicIp
    storage: GenericResource
    cluster: GenericResource

    @property
    def names(self) -> set[str]:
        """Every resource the run left, its group included."""
        return {
            self.group, self.vm.name, f"{self.vm.name}-osdisk", f"{self.vm.name}-data",
            self.nic.name, self.public_ip.name, self.storage.name, self.cluster.name,
        }  # fmt: skip


def leaked_run(state: ArmState, subscription: str, group: str = "rg-ci-run-77") -> LeakedRun:
    created = datetime.now(UTC) - timedelta(days=1)
    tags = {"task-id": TASK, "ci-run": RUN}
    state.add_group(subscription, group).tags.update(tags)
    vm = state.add_vm(
        subscription, group, "vm-ci-77", size="Standard_D4as_v6", tags=tags, time_created=created
    )
    for name in (f"{vm.name}-osdisk", f"{vm.name}-data"):
        disk = state.add_disk(subscription, group, name, tags=tags, time_created=created)
        attach_disk(state, vm, disk)
    nic = add_nic(state, vm, tags=tags)
    address = state.public_ips[(nic.public_ip or "").casefold()]
    storage = state.add_resource(
        subscription, group, "Microsoft.Storage/storageAccounts", "stci77leaked",
        tags=tags, created=created, sku={"name": "Standard_LRS", "tier": "Standard"},
        kind="StorageV2", properties={"creationTime": created.isoformat()},
    )  # fmt: skip
    cluster = state.add_resource(
        subscription, group, "Microsoft.ContainerService/managedClusters", "aks-ci-77",
        tags=tags, created=created, sku={"name": "Base", "tier": "Standard"},
    )  # fmt: skip
    return LeakedRun(subscription, group, vm, nic, address, storage, cluster)

"""Azure's kinds: the ARM types cloudguard names with a shared word, and what each bills idle.

Any other ARM type is a kind of its own, spelled as ARM spells it, lower-cased
(`microsoft.web/sites`). Billing is stated only where it is known and does not
depend on usage alone; a kind missing from `BILLING` is billed *unknown*.
Stdlib only.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from cloudguard.cloud import kinds
from cloudguard.cloud.kinds import Billing, bills, free

RESOURCE_GROUP_TYPE = "microsoft.resources/resourcegroups"
SUBSCRIPTION_TYPE = "microsoft.resources/subscriptions"
# A group's type as ARM spells it, and as Resource Graph's resourcecontainers does.
GROUP_TYPES = frozenset({RESOURCE_GROUP_TYPE, "microsoft.resources/subscriptions/resourcegroups"})
RESOURCE_GROUP_KIND = kinds.RESOURCE_GROUP

# ARM type (lower-case) -> the shared kind.
SHARED: Mapping[str, str] = MappingProxyType(
    {
        "microsoft.compute/virtualmachines": kinds.VM,
        "microsoft.compute/disks": kinds.DISK,
        "microsoft.compute/snapshots": kinds.SNAPSHOT,
        "microsoft.compute/virtualmachinescalesets": kinds.SCALE_SET,
        "microsoft.network/networkinterfaces": kinds.NIC,
        "microsoft.network/publicipaddresses": kinds.PUBLIC_IP,
        "microsoft.network/loadbalancers": kinds.LOAD_BALANCER,
        "microsoft.network/natgateways": kinds.NAT_GATEWAY,
        "microsoft.network/networksecuritygroups": kinds.SECURITY_GROUP,
        "microsoft.network/virtualnetworks": kinds.VIRTUAL_NETWORK,
        "microsoft.storage/storageaccounts": kinds.STORAGE_ACCOUNT,
        "microsoft.containerservice/managedclusters": kinds.KUBERNETES_CLUSTER,
        "microsoft.sql/servers/databases": kinds.DATABASE,
        RESOURCE_GROUP_TYPE: kinds.RESOURCE_GROUP,
    }
)
_TYPES = {kind: arm_type for arm_type, kind in SHARED.items()}


def kind_of(arm_type: str) -> str:
    """The kind of a resource of `arm_type` (`Microsoft.Network/publicIPAddresses`)."""
    folded = arm_type.casefold()
    return SHARED.get(folded, folded)


def arm_type_of(kind: str) -> str:
    """The ARM type (lower-case) of `kind`: the inverse of `kind_of`."""
    return _TYPES.get(kind, kind)


BILLING: Mapping[str, Billing] = MappingProxyType(
    {
        kinds.DISK: bills("a managed disk bills its storage while it exists, attached or not"),
        kinds.SNAPSHOT: bills("a snapshot bills its storage while it exists"),
        kinds.PUBLIC_IP: bills("a public IP bills by the hour while it exists, attached or not"),
        kinds.LOAD_BALANCER: bills("a Standard load balancer bills by the hour and its rules"),
        kinds.NAT_GATEWAY: bills("a NAT gateway bills by the hour and for data processed"),
        kinds.STORAGE_ACCOUNT: bills(
            "a storage account bills for what it stores and serves (usage, not hours)"
        ),
        kinds.KUBERNETES_CLUSTER: bills(
            "a cluster's Standard tier bills by the hour; its nodes bill as scale-set VMs"
        ),
        kinds.SCALE_SET: bills("a scale set bills its instances as VMs"),
        kinds.DATABASE: bills("a database bills its compute or DTUs and storage"),
        kinds.NIC: free("a NIC bills nothing by itself"),
        kinds.SECURITY_GROUP: free("a network security group bills nothing"),
        kinds.VIRTUAL_NETWORK: free("a virtual network bills nothing by itself"),
        kinds.RESOURCE_GROUP: free("a resource group bills nothing itself; its resources do"),
    }
)

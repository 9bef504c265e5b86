"""Google Cloud's kinds: resources by Cloud Asset Inventory asset type, and what each bills idle.

A resource's type is its asset type as Cloud Asset Inventory names it
(`compute.googleapis.com/Instance`, `storage.googleapis.com/Bucket`). Where
clouds share the idea the kind is the shared word (a Compute Engine instance
is a `vm`, a persistent disk a `disk`); any other type is a kind of its own,
the asset type lower-cased (`pubsub.googleapis.com/topic`), as the Azure
adapter lower-cases ARM types. A kind missing from `BILLING` bills *unknown*.
Stdlib only.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from cloudguard.cloud import kinds
from cloudguard.cloud.kinds import Billing, bills, free

INSTANCE = "compute.googleapis.com/Instance"

# asset type -> the shared kind.
SHARED: Mapping[str, str] = MappingProxyType(
    {
        INSTANCE: kinds.VM,
        "compute.googleapis.com/Disk": kinds.DISK,
        "compute.googleapis.com/Snapshot": kinds.SNAPSHOT,
        # A reserved address, regional or global (an internal one is listed too: the kind
        # says what it is, its billing note what it costs).
        "compute.googleapis.com/Address": kinds.PUBLIC_IP,
        "compute.googleapis.com/GlobalAddress": kinds.PUBLIC_IP,
        "compute.googleapis.com/Firewall": kinds.SECURITY_GROUP,
        "compute.googleapis.com/Network": kinds.VIRTUAL_NETWORK,
        "compute.googleapis.com/InstanceGroupManager": kinds.SCALE_SET,
        "storage.googleapis.com/Bucket": kinds.BUCKET,
        "container.googleapis.com/Cluster": kinds.KUBERNETES_CLUSTER,
        "sqladmin.googleapis.com/Instance": kinds.DATABASE,
    }
)
_FOLDED = {asset_type.casefold(): kind for asset_type, kind in SHARED.items()}


def kind_of(asset_type: str) -> str:
    """The shared kind of an asset type, else the asset type lower-cased."""
    folded = asset_type.casefold()
    return _FOLDED.get(folded, folded)


BILLING: Mapping[str, Billing] = MappingProxyType(
    {
        kinds.DISK: bills("a persistent disk bills its provisioned size while it exists"),
        kinds.SNAPSHOT: bills("a snapshot bills its stored bytes while it exists"),
        kinds.PUBLIC_IP: bills("a reserved external address bills by the hour, in use or not"),
        kinds.BUCKET: bills("a bucket bills for what it stores and serves (usage, not hours)"),
        kinds.KUBERNETES_CLUSTER: bills(
            "a GKE cluster bills its management fee by the hour; its nodes bill as instances"
        ),
        kinds.DATABASE: bills("a Cloud SQL instance bills while running; its storage always"),
        kinds.SCALE_SET: bills("a managed instance group bills its instances"),
        kinds.SECURITY_GROUP: free("a firewall rule bills nothing"),
        kinds.VIRTUAL_NETWORK: free("a VPC network bills nothing by itself"),
    }
)

"""Kinds of resource, and whether each bills while it sits idle. Stdlib only; no cloud named.

A run leaks more than VMs: the resource group it made, its disks, a public
IP, a storage account, a cluster. Each `Resource` says what it is in `kind`:
one of the short names below where clouds share the idea (a VM, a disk, a
public IP, ...), otherwise the cloud's own type name as its inventory spells
it (an ARM type such as `microsoft.web/sites`, lower-cased; an AWS
`service:type` such as `sqs:queue`). `--kind` takes either.

Whether a kind bills is its cloud's to say (`CloudAdapter.kind_billing`): a
deallocated VM does not, its disks do; an unattached public IP does; an empty
resource group does not. A kind its cloud does not describe is billed
*unknown*, never zero.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from cloudguard.cloud.options import OptionValueError

VM = "vm"
DISK = "disk"
SNAPSHOT = "snapshot"
NIC = "nic"
PUBLIC_IP = "public-ip"
LOAD_BALANCER = "load-balancer"
NAT_GATEWAY = "nat-gateway"
SECURITY_GROUP = "security-group"
VIRTUAL_NETWORK = "virtual-network"
STORAGE_ACCOUNT = "storage-account"
BUCKET = "bucket"
KUBERNETES_CLUSTER = "kubernetes-cluster"
SCALE_SET = "vm-scale-set"
DATABASE = "database"
RESOURCE_GROUP = "resource-group"

# The shared names, in the order a report and a plan list them: what acts on what first
# (a VM before its NIC, a NIC before its public IP), containers last.
SHORT_KINDS = (
    VM,
    SCALE_SET,
    KUBERNETES_CLUSTER,
    DATABASE,
    LOAD_BALANCER,
    NAT_GATEWAY,
    NIC,
    PUBLIC_IP,
    DISK,
    SNAPSHOT,
    STORAGE_ACCOUNT,
    BUCKET,
    SECURITY_GROUP,
    VIRTUAL_NETWORK,
    RESOURCE_GROUP,
)
_ORDER = {kind: index for index, kind in enumerate(SHORT_KINDS)}

# The shared kinds that hold data: deleting one destroys what it holds, so `reap plan` deletes
# one only when the operator names its kind (`--delete-data`). A cloud names its own type
# names that hold data too (`CloudAdapter.data_kinds`).
HOLDS_DATA = frozenset({DISK, SNAPSHOT, STORAGE_ACCOUNT, BUCKET, DATABASE})


def order_of(kind: str) -> int:
    """Where `kind` comes in a plan: the shared kinds in `SHORT_KINDS` order, a cloud's own
    type names after them (before resource groups, which hold the rest)."""
    if kind == RESOURCE_GROUP:
        return len(SHORT_KINDS) + 1
    return _ORDER.get(kind, len(SHORT_KINDS))


def parse_kind(value: object) -> str:
    """One `--kind` value: a shared name (`vm`, `public-ip`, ...) or a cloud's type name
    (`microsoft.web/sites`, `sqs:queue`), lower-cased as resources carry them."""
    if not isinstance(value, str) or not value.strip():
        raise OptionValueError(f"expected a kind, got {value!r}")
    kind = value.strip().casefold()
    if kind in _ORDER or _is_type_name(kind):
        return kind
    raise OptionValueError(
        f"unknown kind {value!r}: one of {', '.join(SHORT_KINDS)}, or a cloud's type name "
        "(an ARM type such as microsoft.web/sites, an AWS service:type such as sqs:queue)"
    )


def _is_type_name(kind: str) -> bool:
    separator = "/" if "/" in kind else ":"
    namespace, _, name = kind.partition(separator)
    return bool(namespace) and bool(name) and " " not in kind


def wanted(kinds: Collection[str]) -> frozenset[str] | None:
    """The kinds a request asks for; None: every kind."""
    return frozenset(kinds) or None


@dataclass(frozen=True)
class Billing:
    """Whether a kind bills while nothing uses it, and when (for the report).

    `idle` True: it bills while it exists, whatever it does (a disk, a public IP);
    False: it bills nothing by itself (a NIC, a resource group); None: unknown.
    A VM's billing is its power state's (`CloudAdapter.billable_power_states`).
    """

    idle: bool | None
    when: str


def bills(when: str) -> Billing:
    """A kind that bills while it exists, whatever it does."""
    return Billing(True, when)


def free(when: str) -> Billing:
    """A kind that bills nothing by itself."""
    return Billing(False, when)


def unknown_billing(kind: str) -> Billing:
    return Billing(None, f"billing of a {kind} unknown to cloudguard")

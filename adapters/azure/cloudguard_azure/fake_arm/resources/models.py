"""Microsoft.Resources' state: subscriptions, their resource groups, and their tags."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.state import ArmState

DEFAULT_LOCATION = "westeurope"
EPOCH = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

# The api-versions each provider lists for a type (Providers_Get), newest first. A request
# by id with any other is refused, as ARM refuses it (NoRegisteredProviderFound).
API_VERSIONS: dict[str, tuple[str, ...]] = {
    "microsoft.storage/storageaccounts": ("2024-01-01", "2023-05-01", "2023-01-01"),
    "microsoft.containerservice/managedclusters": ("2025-02-01", "2024-09-01"),
    "microsoft.network/loadbalancers": ("2024-05-01", "2024-03-01"),
    "microsoft.network/networksecuritygroups": ("2024-05-01", "2024-03-01"),
    "microsoft.network/virtualnetworks": ("2024-05-01", "2024-03-01"),
    "microsoft.compute/snapshots": ("2024-03-02", "2023-10-02"),
    "microsoft.web/sites": ("2024-04-01", "2023-12-01"),
}
DEFAULT_API_VERSIONS = ("2024-03-01",)


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
class GenericResource:
    """A resource of any type the fake has no provider folder for (a storage account, a
    managed cluster): what Microsoft.Resources lists, reads by id and deletes by id."""

    subscription: str
    group: str
    arm_type: str  # Namespace/type as ARM spells it: Microsoft.Storage/storageAccounts
    name: str
    location: str
    tags: dict[str, str]
    created: datetime = EPOCH
    sku: dict[str, str] | None = None
    kind: str | None = None
    managed_by: str | None = None
    properties: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return (
            f"/subscriptions/{self.subscription}/resourceGroups/{self.group}"
            f"/providers/{self.arm_type}/{self.name}"
        )


def add_resource(
    state: ArmState,
    subscription_id: str,
    group: str,
    arm_type: str,
    name: str,
    *,
    tags: Mapping[str, str] | None = None,
    created: datetime | None = None,
    sku: dict[str, str] | None = None,
    kind: str | None = None,
    properties: dict[str, Any] | None = None,
    location: str | None = None,
) -> GenericResource:
    """A resource of `arm_type` in `group`, with a `resourceGuid` unless `properties` says."""
    with state.lock:
        rg = add_group(state, subscription_id, group, location or DEFAULT_LOCATION)
        found = GenericResource(
            subscription=state.subscription(subscription_id).id,  # type: ignore[union-attr]
            group=rg.name,
            arm_type=arm_type,
            name=name,
            location=location or rg.location,
            tags=dict(tags or {}),
            created=created or EPOCH,
            sku=sku,
            kind=kind,
            properties=dict(
                properties if properties is not None else {"resourceGuid": str(uuid.uuid4())}
            ),
        )
        state.generic[found.id.casefold()] = found
        return found


def generic(state: ArmState, resource_id: str) -> GenericResource | None:
    return state.generic.get(resource_id.rstrip("/").casefold())


def api_versions(arm_type: str) -> tuple[str, ...]:
    return API_VERSIONS.get(arm_type.casefold(), DEFAULT_API_VERSIONS)


def add_subscription(
    state: ArmState, subscription_id: str, display_name: str = "", tenant_id: str = ""
) -> Subscription:
    with state.lock:
        sub = Subscription(
            subscription_id,
            display_name or f"subscription {subscription_id[:8]}",
            tenant_id or "72f988bf-86f1-41af-91ab-2d7cd011db47",
        )
        state.subscriptions[subscription_id.casefold()] = sub
        return sub


def add_group(
    state: ArmState, subscription_id: str, name: str, location: str = DEFAULT_LOCATION
) -> ResourceGroup:
    with state.lock:
        sub = subscription(state, subscription_id)
        if sub is None:
            sub = add_subscription(state, subscription_id)
        group = sub.groups.get(name.casefold())
        if group is None:
            group = sub.groups[name.casefold()] = ResourceGroup(name, location)
        return group


def subscription(state: ArmState, subscription_id: str) -> Subscription | None:
    return state.subscriptions.get(subscription_id.casefold())


def remove_group(state: ArmState, sub: Subscription, group: ResourceGroup) -> None:
    """What ARM does when a group is deleted: everything in it goes, then the group."""
    prefix = f"/subscriptions/{sub.id}/resourcegroups/{group.name}/".casefold()
    with state.lock:
        for records in (state.vms, state.disks, state.nics, state.public_ips, state.generic):
            for key in [k for k in records if k.startswith(prefix)]:
                del records[key]
        sub.groups.pop(group.name.casefold(), None)

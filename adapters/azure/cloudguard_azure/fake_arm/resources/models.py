"""Microsoft.Resources' state: subscriptions, their resource groups, and their tags."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.state import ArmState

DEFAULT_LOCATION = "westeurope"


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

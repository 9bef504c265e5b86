"""Microsoft.Resources' JSON shapes (Subscriptions_List, ResourceGroups_List / _Get)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cloudguard_azure.fake_arm.wire import Json

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.resources.models import ResourceGroup, Subscription


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

"""Microsoft.Resources' JSON shapes (Subscriptions_List, ResourceGroups_List / _Get)."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from cloudguard_azure.fake_arm.wire import Json, arm_time

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.inventory import Listed
    from cloudguard_azure.fake_arm.resources.models import (
        GenericResource,
        ResourceGroup,
        Subscription,
    )


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


def listed_resource(listed: Listed, expand: Collection[str]) -> Json:
    """One item of Resources_List / Resources_ListByResourceGroup (GenericResourceExpanded):
    no `properties`; `createdTime`, `changedTime`, `provisioningState` only when expanded."""
    body: Json = {
        "id": listed.id,
        "name": listed.name,
        "type": listed.type,
        "location": listed.location,
        "tags": dict(listed.tags),
    }
    if listed.sku:
        body["sku"] = dict(listed.sku)
    if listed.kind:
        body["kind"] = listed.kind
    if listed.managed_by:
        body["managedBy"] = listed.managed_by
    if "createdtime" in expand:
        body["createdTime"] = arm_time(listed.created)
    if "changedtime" in expand:
        body["changedTime"] = arm_time(listed.created)
    if "provisioningstate" in expand:
        body["provisioningState"] = "Succeeded"
    return body


def generic_resource(found: GenericResource) -> Json:
    """A resource read by id (Resources_GetById): with its properties, no createdTime."""
    body: Json = {
        "id": found.id,
        "name": found.name,
        "type": found.arm_type,
        "location": found.location,
        "tags": dict(found.tags),
        "properties": {"provisioningState": "Succeeded", **found.properties},
    }
    if found.sku:
        body["sku"] = dict(found.sku)
    if found.kind:
        body["kind"] = found.kind
    if found.managed_by:
        body["managedBy"] = found.managed_by
    return body


def provider(sub: str, namespace: str, types: dict[str, tuple[str, ...]]) -> Json:
    """Providers_Get: the namespace's resource types with the api-versions each takes."""
    return {
        "id": f"/subscriptions/{sub}/providers/{namespace}",
        "namespace": namespace,
        "registrationState": "Registered",
        "registrationPolicy": "RegistrationRequired",
        "resourceTypes": [
            {
                "resourceType": resource_type,
                "locations": ["West Europe", "East US"],
                "apiVersions": list(versions),
                "capabilities": "SupportsTags, SupportsLocation",
            }
            for resource_type, versions in sorted(types.items())
        ],
    }

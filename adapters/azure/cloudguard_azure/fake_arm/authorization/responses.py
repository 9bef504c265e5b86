"""Microsoft.Authorization's JSON shapes (ManagementLocks_ListByScope, api-version 2020-05-01)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cloudguard_azure.fake_arm.wire import Json

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.authorization.models import ManagementLock


def management_lock(lock: ManagementLock) -> Json:
    """One lock (ManagementLocks_ListByScope, api-version 2020-05-01)."""
    return {
        "id": lock.id,
        "type": "Microsoft.Authorization/locks",
        "name": lock.name,
        "properties": {"level": lock.level, "notes": lock.notes, "owners": []},
    }

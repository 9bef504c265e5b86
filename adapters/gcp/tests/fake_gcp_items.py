"""The fake Google Cloud's side for reaping: one Compute Engine resource read, stopped or
deleted, and the Operations that say when that is done.

Routes (each resource named by its name or its numeric id, as Compute's path parameters
accept both: `[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?|[1-9][0-9]{0,19}`):

- `GET|DELETE /compute/v1/projects/P/zones/Z/instances/I`, `POST .../instances/I/stop`;
- `GET|DELETE /compute/v1/projects/P/{zones/Z|regions/R}/disks/D`;
- `GET|DELETE /compute/v1/projects/P/{regions/R|global}/addresses/A`;
- `GET|DELETE /compute/v1/projects/P/global/snapshots/S`;
- `GET|POST /compute/v1/projects/P/{zones/Z|regions/R|global}/operations/O[/wait]`.

An accepted stop or delete answers an Operation (`RUNNING`); its effect is made at once and
the Operation reads `DONE` at its first `wait` or `get`. What Compute refuses it refuses as
Compute does, before any Operation: a disk or address in use (400
`resourceInUseByAnotherResource`), an instance with deletion protection (400
`invalidResourceUsage`). `GcpFaults.operation_errors` makes the Operation of a named
resource end `DONE` with an error and no effect; `GcpFaults.slow_operations` keeps every
Operation `RUNNING` that many more waits. A deleted instance takes its auto-delete disks
with it and leaves the rest, unattached.
"""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from fake_gcp import (
    COMPUTE_V1,
    Address,
    Disk,
    Instance,
    Snapshot,
    _address,
    _disk,
    _instance,
    _snapshot,
    google_error,
)

if TYPE_CHECKING:
    from fake_gcp import FakeGcp

# A place is `zones/Z`, `regions/R` or `global` (group 2: the scope, 3: the zone or region).
_PLACE = r"(zones|regions|global)(?:/([^/]+))?"
ITEM_ROUTE = re.compile(
    rf"^/compute/v1/projects/([^/]+)/{_PLACE}/(instances|disks|addresses|snapshots)/([^/]+?)"
    r"(/stop)?$"
)
OPERATION_ROUTE = re.compile(
    rf"^/compute/v1/projects/([^/]+)/{_PLACE}/operations/([^/]+?)(/wait)?$"
)
_OPERATIONS = itertools.count(1)
_KIND = {"instances": "instance", "disks": "disk", "addresses": "address", "snapshots": "snapshot"}
# (scope, collection) -> the API's collection, as requests are counted (`regionDisks.get`).
_API = {("regions", "disks"): "regionDisks", ("global", "addresses"): "globalAddresses"}
# Where each collection may be: a request naming another place finds nothing (404).
_SCOPES = {"instances": {"zones"}, "disks": {"zones", "regions"},
           "addresses": {"regions", "global"}, "snapshots": {"global"}}  # fmt: skip
Resource = Instance | Disk | Address | Snapshot


def operation_name(method: str, path: str) -> str | None:
    """How a request of this module is counted (`instances.get`, `zoneOperations.wait`)."""
    if found := ITEM_ROUTE.match(path):
        scope, collection, stop = found.group(2), found.group(4), found.group(6)
        verb = {"GET": "get", "DELETE": "delete"}.get(method)
        if stop:
            verb = "stop" if method == "POST" and collection == "instances" else None
        return f"{_API.get((scope, collection), collection)}.{verb}" if verb else None
    if found := OPERATION_ROUTE.match(path):
        scope = f"{found.group(2).removesuffix('s')}Operations"  # zone, region, global
        if found.group(5):
            return f"{scope}.wait" if method == "POST" else None
        return f"{scope}.get" if method == "GET" else None
    return None


def answer_item(fake: FakeGcp, method: str, path: str, request_id: str = "") -> tuple[int, Any]:
    """A read, stop or delete; an action whose `requestId` was carried out before is answered
    with that first request's Operation and done no more, as Compute does."""
    found = ITEM_ROUTE.match(path)
    assert found is not None
    project, scope, where, collection, name = found.group(1, 2, 3, 4, 5)
    place = f"{scope}/{where}" if where else scope
    if project in fake.faults.denied_projects or project not in fake.world.projects:
        verb = "get" if method == "GET" else "delete" if method == "DELETE" else "stop"
        return google_error(
            403,
            f"Required 'compute.{collection}.{verb}' permission for 'projects/{project}/"
            f"{place}/{collection}/{name}'",
            "forbidden",
        )
    with fake.lock:
        if method != "GET" and request_id in fake.request_ids:
            return 200, dict(fake.operations[fake.request_ids[request_id]])
        resource = _find(fake, project, place, collection, name)
        if resource is None:
            return google_error(
                404,
                f"The resource 'projects/{project}/{place}/{collection}/{name}' was not found",
                "notFound",
            )
        if method == "GET":
            return 200, _shown(fake, resource)
        refused = _refused(fake, resource, method)
        if refused is not None:
            return refused
        operation = _accept(fake, resource, project, place, stop=method == "POST")
        if request_id:
            fake.request_ids[request_id] = operation["name"]
        return 200, operation


def answer_operation(fake: FakeGcp, path: str) -> tuple[int, Any]:
    found = OPERATION_ROUTE.match(path)
    assert found is not None
    with fake.lock:
        operation = fake.operations.get(found.group(4))
        if operation is None or operation["selfLink"].split("/compute/v1/")[1] != (
            path.removeprefix("/compute/v1/").removesuffix("/wait")
        ):
            return google_error(
                404, f"The resource '{path.removeprefix('/compute/v1/')}' was not found", "notFound"
            )
        waits = fake.operation_waits.get(operation["name"], 0)
        if waits > 0:
            fake.operation_waits[operation["name"]] = waits - 1
        else:
            operation["status"] = "DONE"
            operation["progress"] = 100
            operation.setdefault("endTime", datetime.now(UTC).isoformat())
        return 200, dict(operation)


def _find(fake: FakeGcp, project: str, place: str, collection: str, name: str) -> Resource | None:
    world = fake.world
    pool: list[Any] = {
        "instances": world.instances,
        "disks": world.disks,
        "addresses": world.addresses,
        "snapshots": world.snapshots,
    }[collection]
    if place.split("/")[0] not in _SCOPES[collection]:
        return None
    for resource in pool:
        if (
            resource.project == project
            and _place(resource) == place
            and name in (resource.name, resource.id)
        ):
            return resource  # type: ignore[no-any-return]
    return None


def _place(resource: Resource) -> str:
    if isinstance(resource, Instance):
        return f"zones/{resource.zone}"
    return "global" if isinstance(resource, Snapshot) else resource.place


def _collection(resource: Resource) -> str:
    return {Instance: "instances", Disk: "disks", Address: "addresses",
            Snapshot: "snapshots"}[type(resource)]  # fmt: skip


def _shown(fake: FakeGcp, resource: Resource) -> dict[str, Any]:
    if isinstance(resource, Instance):
        return _instance(resource, fake.world.disks)
    if isinstance(resource, Disk):
        return _disk(resource)
    if isinstance(resource, Snapshot):
        return _snapshot(resource)
    return _address(resource)


def _users(resource: Resource) -> str:
    zone = getattr(resource, "zone", "")
    return ", ".join(
        f"projects/{resource.project}/zones/{zone or '-'}/instances/{user}"
        for user in getattr(resource, "users", [])
    )


def _refused(fake: FakeGcp, resource: Resource, method: str) -> Any:
    where = (
        f"projects/{resource.project}/{_place(resource)}/{_collection(resource)}/{resource.name}"
    )
    if isinstance(resource, Instance) and method == "DELETE" and resource.deletion_protection:
        return google_error(
            400,
            "Invalid resource usage: 'Resource cannot be deleted if it's protected against "
            "deletion.'.",
            "invalidResourceUsage",
        )
    in_use = isinstance(resource, Disk) and resource.users
    in_use = in_use or (isinstance(resource, Address) and resource.status == "IN_USE")
    if in_use:
        kind = "disk" if isinstance(resource, Disk) else "address"
        return google_error(
            400,
            f"The {kind} resource '{where}' is already being used by '{_users(resource)}'",
            "resourceInUseByAnotherResource",
        )
    return None


def _accept(
    fake: FakeGcp, resource: Resource, project: str, place: str, *, stop: bool
) -> dict[str, Any]:
    """An Operation for the action, its effect made unless a fault makes it fail."""
    collection = _collection(resource)
    name = f"operation-{next(_OPERATIONS)}-{resource.id}"
    base = f"{COMPUTE_V1}/projects/{project}/{place}"
    now = datetime.now(UTC).isoformat()
    operation: dict[str, Any] = {
        "kind": "compute#operation",
        "id": str(9100000000000000000 + next(_OPERATIONS)),
        "name": name,
        "operationType": "stop" if stop else "delete",
        "targetLink": f"{base}/{collection}/{resource.name}",
        "targetId": resource.id,
        "status": "RUNNING",
        "user": "fleet-auditor@fleet-pilot-7c7.iam.gserviceaccount.com",
        "progress": 0,
        "insertTime": now,
        "startTime": now,
        "selfLink": f"{base}/operations/{name}",
    }
    if place != "global":  # a zonal or regional Operation names its zone or region
        operation[place.split("/")[0][:-1]] = base
    fake.operations[name] = operation
    fake.operation_waits[name] = fake.faults.slow_operations
    fake.actions.append((operation["operationType"], _KIND[collection], resource.name, resource.id))
    failure = fake.faults.operation_errors.get(resource.name)
    if failure is not None:
        code, message = failure
        operation["error"] = {"errors": [{"code": code, "message": message}]}
        operation["httpErrorStatusCode"] = 400
        operation["httpErrorMessage"] = "BAD REQUEST"
        return dict(operation)
    world = fake.world
    if isinstance(resource, Instance):
        if stop:
            resource.status = "TERMINATED"
        else:
            world.instances.remove(resource)
            for disk in [d for d in world.disks if d.project == project]:
                if resource.name in disk.users and disk.zone in (resource.zone, ""):
                    disk.users.remove(resource.name)
                    if disk.name not in resource.kept_disks:
                        world.disks.remove(disk)  # autoDelete: it goes with its instance
    elif isinstance(resource, Disk):
        world.disks.remove(resource)
    elif isinstance(resource, Snapshot):
        world.snapshots.remove(resource)
    else:
        world.addresses.remove(resource)
    return dict(operation)

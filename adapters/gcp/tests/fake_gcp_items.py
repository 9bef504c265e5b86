"""The fake Google Cloud's side for reaping: one Compute Engine resource read, stopped or
deleted, and the Operations that say when that is done.

Routes (each resource named by its name or its numeric id, as Compute's path parameters
accept both: `[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?|[1-9][0-9]{0,19}`):

- `GET|DELETE /compute/v1/projects/P/zones/Z/instances/I`, `POST .../instances/I/stop`;
- `GET|DELETE /compute/v1/projects/P/zones/Z/disks/D`;
- `GET|DELETE /compute/v1/projects/P/regions/R/addresses/A`;
- `GET|POST /compute/v1/projects/P/{zones/Z|regions/R}/operations/O[/wait]`.

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

from fake_gcp import COMPUTE_V1, Address, Disk, Instance, _address, _disk, _instance, google_error

if TYPE_CHECKING:
    from fake_gcp import FakeGcp

ITEM_ROUTE = re.compile(
    r"^/compute/v1/projects/([^/]+)/(zones|regions)/([^/]+)/"
    r"(instances|disks|addresses)/([^/]+?)(/stop)?$"
)
OPERATION_ROUTE = re.compile(
    r"^/compute/v1/projects/([^/]+)/(zones|regions)/([^/]+)/operations/([^/]+?)(/wait)?$"
)
_OPERATIONS = itertools.count(1)
_KIND = {"instances": "instance", "disks": "disk", "addresses": "address"}


def operation_name(method: str, path: str) -> str | None:
    """How a request of this module is counted (`instances.get`, `zoneOperations.wait`)."""
    if found := ITEM_ROUTE.match(path):
        collection, stop = found.group(4), found.group(6)
        verb = {"GET": "get", "DELETE": "delete"}.get(method)
        if stop:
            verb = "stop" if method == "POST" and collection == "instances" else None
        return f"{collection}.{verb}" if verb else None
    if found := OPERATION_ROUTE.match(path):
        scope = "zoneOperations" if found.group(2) == "zones" else "regionOperations"
        if found.group(5):
            return f"{scope}.wait" if method == "POST" else None
        return f"{scope}.get" if method == "GET" else None
    return None


def answer_item(fake: FakeGcp, method: str, path: str) -> tuple[int, Any]:
    found = ITEM_ROUTE.match(path)
    assert found is not None
    project, scope, where, collection, name = found.group(1, 2, 3, 4, 5)
    if project in fake.faults.denied_projects or project not in fake.world.projects:
        verb = "get" if method == "GET" else "delete" if method == "DELETE" else "stop"
        return google_error(
            403,
            f"Required 'compute.{collection}.{verb}' permission for 'projects/{project}/"
            f"{scope}/{where}/{collection}/{name}'",
            "forbidden",
        )
    with fake.lock:
        resource = _find(fake, project, scope, where, collection, name)
        if resource is None:
            return google_error(
                404,
                f"The resource 'projects/{project}/{scope}/{where}/{collection}/{name}' was "
                "not found",
                "notFound",
            )
        if method == "GET":
            return 200, _shown(fake, resource)
        refused = _refused(fake, resource, method)
        if refused is not None:
            return refused
        return 200, _accept(fake, resource, project, scope, where, stop=method == "POST")


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


def _find(
    fake: FakeGcp, project: str, scope: str, where: str, collection: str, name: str
) -> Instance | Disk | Address | None:
    world = fake.world
    pool: list[Any] = {
        "instances": world.instances,
        "disks": world.disks,
        "addresses": world.addresses,
    }[collection]
    if (scope == "regions") != (collection == "addresses"):
        return None  # addresses are regional, instances and disks zonal
    for resource in pool:
        place = resource.region if collection == "addresses" else resource.zone
        if resource.project == project and place == where and name in (resource.name, resource.id):
            return resource  # type: ignore[no-any-return]
    return None


def _shown(fake: FakeGcp, resource: Instance | Disk | Address) -> dict[str, Any]:
    if isinstance(resource, Instance):
        return _instance(resource, fake.world.disks)
    if isinstance(resource, Disk):
        return _disk(resource)
    return _address(resource)


def _users(resource: Instance | Disk | Address) -> str:
    zone = getattr(resource, "zone", "")
    return ", ".join(
        f"projects/{resource.project}/zones/{zone or '-'}/instances/{user}"
        for user in getattr(resource, "users", [])
    )


def _refused(fake: FakeGcp, resource: Instance | Disk | Address, method: str) -> Any:
    where = (
        f"projects/{resource.project}/regions/{resource.region}/addresses/{resource.name}"
        if isinstance(resource, Address)
        else f"projects/{resource.project}/zones/{resource.zone}/"
        f"{'instances' if isinstance(resource, Instance) else 'disks'}/{resource.name}"
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
    fake: FakeGcp,
    resource: Instance | Disk | Address,
    project: str,
    scope: str,
    where: str,
    *,
    stop: bool,
) -> dict[str, Any]:
    """An Operation for the action, its effect made unless a fault makes it fail."""
    collection = (
        "instances"
        if isinstance(resource, Instance)
        else "disks"
        if isinstance(resource, Disk)
        else "addresses"
    )
    name = f"operation-{next(_OPERATIONS)}-{resource.id}"
    base = f"{COMPUTE_V1}/projects/{project}/{scope}/{where}"
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
        scope[:-1]: base,
    }
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
            for disk in [d for d in world.disks if d.project == project and d.zone == where]:
                if resource.name in disk.users:
                    disk.users.remove(resource.name)
                    if disk.name not in resource.kept_disks:
                        world.disks.remove(disk)  # autoDelete: it goes with its instance
    elif isinstance(resource, Disk):
        world.disks.remove(resource)
    else:
        world.addresses.remove(resource)
    return dict(operation)

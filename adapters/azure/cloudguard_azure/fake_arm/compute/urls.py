"""Microsoft.Compute's routes: list, read, deallocate and delete VMs and disks; poll operations."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from cloudguard_azure.fake_arm import operations, wire
from cloudguard_azure.fake_arm.compute import models, responses
from cloudguard_azure.fake_arm.routing import (
    GROUP,
    SUB,
    Context,
    Request,
    Response,
    accepted,
    arm_error,
    json_response,
    not_found,
    paged,
    route,
    scope_missing,
    subscription_or_404,
)

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.operations import Operation

_COMPUTE = "/providers/Microsoft.Compute"
_VM = GROUP + _COMPUTE + r"/virtualMachines/(?P<name>[^/]+)"


def _rendered(with_status: bool) -> Callable[[models.VirtualMachine], wire.Json]:
    return lambda vm: responses.virtual_machine(vm, with_status=with_status)


def _lro_accepted(req: Request, sub: str, op: Operation) -> Response:
    """202 with the headers ARM sends for a long-running operation."""
    api = req.query.get("api-version", "")
    base = (
        f"{req.base_url}/subscriptions/{sub}{_COMPUTE}/locations/{op.location}/operations/{op.id}"
    )
    return accepted(
        {
            "Azure-AsyncOperation": f"{base}?p=fake&api-version={api}",
            "Location": f"{base}?p=fake&monitor=true&api-version={api}",
        }
    )


def _wants_status(req: Request) -> bool:
    return req.query.get("statusonly", "").lower() == "true" or (
        req.query.get("$expand", "").lower() == "instanceview"
    )


# -- virtual machines ----------------------------------------------------------------------


@route("GET", "vm_list_all", SUB + _COMPUTE + r"/virtualMachines")
def list_all_vms(ctx: Context, req: Request, sub: str) -> Response:
    if missing := subscription_or_404(ctx, sub):
        return missing
    with_status = _wants_status(req)
    vms = models.vms_in(ctx.state, sub)
    return paged(
        ctx, req, vms, lambda vm: responses.virtual_machine(vm, with_status=with_status), sub
    )


@route("GET", "vm_list", GROUP + _COMPUTE + r"/virtualMachines")
def list_vms(ctx: Context, req: Request, sub: str, group: str) -> Response:
    if missing := subscription_or_404(ctx, sub):
        return missing
    with_status = _wants_status(req)
    vms = models.vms_in(ctx.state, sub, group)
    return paged(
        ctx, req, vms, lambda vm: responses.virtual_machine(vm, with_status=with_status), sub
    )


@route("GET", "vm_instance_view", _VM + "/instanceView")
def instance_view(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    vm = models.vm(ctx.state, sub, group, name)
    if vm is None:
        return not_found("Microsoft.Compute/virtualMachines", name, group)
    return json_response(200, responses.instance_view(vm))


@route("GET", "vm_get", _VM)
def get_vm(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    if missing := scope_missing(ctx, sub, group):
        return missing
    vm = models.vm(ctx.state, sub, group, name)
    if vm is None:
        return not_found("Microsoft.Compute/virtualMachines", name, group)
    return json_response(200, responses.virtual_machine(vm, with_status=_wants_status(req)))


@route("POST", "vm_deallocate", _VM + "/deallocate")
def deallocate_vm(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    vm = models.vm(ctx.state, sub, group, name)
    if vm is None:
        return not_found("Microsoft.Compute/virtualMachines", name, group)
    failure = ctx.faults.take_operation_failure(req.path)
    return _lro_accepted(req, sub, models.begin_deallocate(ctx.state, vm, failure))


@route("DELETE", "vm_delete", _VM)
def delete_vm(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    vm = models.vm(ctx.state, sub, group, name)
    if vm is None:
        return Response(204)  # ARM: deleting what is not there is a success with no content
    failure = ctx.faults.take_operation_failure(req.path)
    return _lro_accepted(req, sub, models.begin_delete(ctx.state, vm, failure))


@route(
    "GET", "operation", SUB + _COMPUTE + r"/locations/(?P<location>[^/]+)/operations/(?P<op>[^/]+)"
)
def poll_operation(ctx: Context, req: Request, sub: str, location: str, op: str) -> Response:
    operation = operations.poll(ctx.state, op)
    if operation is None:
        return arm_error(404, "NotFound", f"The operation '{op}' was not found.")
    # While running, when to poll again (without it azure-core waits its default 30 s): at
    # once, or in a second while a test holds the operation.
    running = operation.status == "InProgress"
    again = {"Retry-After": "1" if ctx.state.hold_operations else "0"} if running else {}
    if req.query.get("monitor", "").lower() == "true":
        # The Location URL: 202 while running, then 200 with the (empty) final result.
        if running:
            location = f"{req.base_url}{req.path}?{urlencode(req.query)}"
            return Response(202, b"", {"Location": location, **again})
        return Response(200)
    return json_response(200, wire.async_operation(operation), again)


# -- managed disks -------------------------------------------------------------------------


@route("GET", "disk_list", SUB + _COMPUTE + r"/disks")
def list_disks(ctx: Context, req: Request, sub: str) -> Response:
    if missing := subscription_or_404(ctx, sub):
        return missing
    return paged(ctx, req, models.disks_in(ctx.state, sub), responses.disk, sub)


@route("GET", "disk_list_by_group", GROUP + _COMPUTE + r"/disks")
def list_disks_by_group(ctx: Context, req: Request, sub: str, group: str) -> Response:
    if missing := subscription_or_404(ctx, sub):
        return missing
    return paged(ctx, req, models.disks_in(ctx.state, sub, group), responses.disk, sub)


@route("GET", "disk_get", GROUP + _COMPUTE + r"/disks/(?P<name>[^/]+)")
def get_disk(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    if missing := scope_missing(ctx, sub, group):
        return missing
    disk = models.disk(ctx.state, sub, group, name)
    if disk is None:
        return not_found("Microsoft.Compute/disks", name, group)
    return json_response(200, responses.disk(disk))


@route("DELETE", "disk_delete", GROUP + _COMPUTE + r"/disks/(?P<name>[^/]+)")
def delete_disk(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    disk = models.disk(ctx.state, sub, group, name)
    if disk is None:
        return Response(204)
    if disk.managed_by:
        # ARM refuses to delete a disk that is attached to a VM.
        return arm_error(
            409,
            "OperationNotAllowed",
            f"Disk {name} is attached to VM {disk.managed_by}.",
        )
    failure = ctx.faults.take_operation_failure(req.path)
    return _lro_accepted(req, sub, models.begin_delete_disk(ctx.state, disk, failure))

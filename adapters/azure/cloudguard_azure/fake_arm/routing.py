"""URL routing of the fake ARM: which request reads or changes which state.

ARM paths are case-insensitive (`resourceGroups` and `resourcegroups` both
appear in the SDKs and in nextLinks), so every pattern is matched ignoring
case. Handlers take a parsed `Request` and return a `Response`; they never
touch sockets, so they can be read (and tested) without the server.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from cloudguard_azure.fake_arm import wire
from cloudguard_azure.fake_arm.faults import Faults
from cloudguard_azure.fake_arm.state import ArmState, Operation, locks_at


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]  # keys casefolded: ARM accepts `$skipToken` and `$skiptoken`
    base_url: str  # scheme://host:port as the client addressed us, for nextLink and LRO URLs
    body: bytes = b""  # the request's content (Resource Graph queries are POSTed)


@dataclass
class Response:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Context:
    state: ArmState
    faults: Faults


Handler = Callable[..., Response]
_SUB = r"/subscriptions/(?P<sub>[^/]+)"
_RG = _SUB + r"/resourceGroups/(?P<group>[^/]+)"
_COMPUTE = "/providers/Microsoft.Compute"
_ROUTES: list[tuple[str, str, re.Pattern[str], Handler]] = []


def route(method: str, name: str, pattern: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        _ROUTES.append((method, name, re.compile(pattern + "/?$", re.IGNORECASE), handler))
        return handler

    return register


def resolve(method: str, path: str) -> tuple[str, Handler, dict[str, str]] | None:
    for want, name, pattern, handler in _ROUTES:
        found = pattern.match(path)
        if found and want == method:
            return name, handler, found.groupdict()
    return None


# -- helpers ----------------------------------------------------------------------


def json_response(status: int, body: wire.Json, headers: dict[str, str] | None = None) -> Response:
    return Response(
        status,
        wire.encode(body),
        {"Content-Type": "application/json; charset=utf-8", **(headers or {})},
    )


def arm_error(status: int, code: str, message: str) -> Response:
    return json_response(status, wire.error(code, message))


def not_found(kind: str, name: str, group: str) -> Response:
    return arm_error(
        404,
        "ResourceNotFound",
        f"The Resource '{kind}/{name}' under resource group '{group}' was not found.",
    )


def paged(
    ctx: Context, req: Request, items: list[Any], render: Callable[[Any], wire.Json], sub: str
) -> Response:
    """One page of `items`, with a nextLink that carries the caller's query plus `$skiptoken`."""
    start = int(req.query.get("$skiptoken", "0") or 0)
    size = max(1, ctx.faults.page_size)
    chunk = items[start : start + size]
    next_link = None
    if start + size < len(items):
        query = {k: v for k, v in req.query.items() if k != "$skiptoken"}
        query["$skiptoken"] = str(start + size)
        next_link = f"{req.base_url}{req.path}?{urlencode(query)}"
    body = wire.encode(wire.page([render(item) for item in chunk], next_link))
    if (sub.casefold(), start // size) in ctx.faults.malformed:
        # A proxy or a gateway cutting a page short: valid status, broken JSON.
        body = body[: max(1, len(body) // 2)]
    return Response(200, body, {"Content-Type": "application/json; charset=utf-8"})


def _subscription_or_404(ctx: Context, sub: str) -> Response | None:
    if ctx.state.subscription(sub) is None:
        return arm_error(
            404, "SubscriptionNotFound", f"The subscription '{sub}' could not be found."
        )
    return None


def _lro_accepted(req: Request, sub: str, op: Operation) -> Response:
    """202 with the headers ARM sends for a long-running operation."""
    api = req.query.get("api-version", "")
    base = (
        f"{req.base_url}/subscriptions/{sub}{_COMPUTE}/locations/{op.location}/operations/{op.id}"
    )
    return Response(
        202,
        b"",
        {
            "Azure-AsyncOperation": f"{base}?p=fake&api-version={api}",
            "Location": f"{base}?p=fake&monitor=true&api-version={api}",
            "Retry-After": "0",
        },
    )


def _wants_status(req: Request) -> bool:
    return req.query.get("statusonly", "").lower() == "true" or (
        req.query.get("$expand", "").lower() == "instanceview"
    )


# -- Microsoft.Resources ------------------------------------------------------------


@route("GET", "subscriptions_list", r"/subscriptions")
def list_subscriptions(ctx: Context, req: Request) -> Response:
    subs = sorted(ctx.state.subscriptions.values(), key=lambda s: s.id)
    return paged(ctx, req, subs, wire.subscription, "")


@route("GET", "subscriptions_get", _SUB)
def get_subscription(ctx: Context, req: Request, sub: str) -> Response:
    found = ctx.state.subscription(sub)
    if found is None:
        return arm_error(
            404, "SubscriptionNotFound", f"The subscription '{sub}' could not be found."
        )
    return json_response(200, wire.subscription(found))


@route("GET", "resource_groups_list", _SUB + r"/resourceGroups")
def list_groups(ctx: Context, req: Request, sub: str) -> Response:
    found = ctx.state.subscription(sub)
    if found is None:
        return arm_error(
            404, "SubscriptionNotFound", f"The subscription '{sub}' could not be found."
        )
    groups = sorted(found.groups.values(), key=lambda g: g.name.casefold())
    return paged(ctx, req, groups, lambda g: wire.resource_group(found, g), sub)


# -- Microsoft.Compute: virtual machines -----------------------------------------------


@route("GET", "vm_list_all", _SUB + _COMPUTE + r"/virtualMachines")
def list_all_vms(ctx: Context, req: Request, sub: str) -> Response:
    if missing := _subscription_or_404(ctx, sub):
        return missing
    with_status = _wants_status(req)
    vms = ctx.state.vms_in(sub)
    return paged(ctx, req, vms, lambda vm: wire.virtual_machine(vm, with_status=with_status), sub)


@route("GET", "vm_list", _RG + _COMPUTE + r"/virtualMachines")
def list_vms(ctx: Context, req: Request, sub: str, group: str) -> Response:
    if missing := _subscription_or_404(ctx, sub):
        return missing
    with_status = _wants_status(req)
    vms = ctx.state.vms_in(sub, group)
    return paged(ctx, req, vms, lambda vm: wire.virtual_machine(vm, with_status=with_status), sub)


@route("GET", "vm_instance_view", _RG + _COMPUTE + r"/virtualMachines/(?P<name>[^/]+)/instanceView")
def instance_view(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    vm = ctx.state.vm(sub, group, name)
    if vm is None:
        return not_found("Microsoft.Compute/virtualMachines", name, group)
    return json_response(200, wire.instance_view(vm))


@route("GET", "vm_get", _RG + _COMPUTE + r"/virtualMachines/(?P<name>[^/]+)")
def get_vm(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    if missing := _scope_missing(ctx, sub, group):
        return missing
    vm = ctx.state.vm(sub, group, name)
    if vm is None:
        return not_found("Microsoft.Compute/virtualMachines", name, group)
    return json_response(200, wire.virtual_machine(vm, with_status=_wants_status(req)))


@route("POST", "vm_deallocate", _RG + _COMPUTE + r"/virtualMachines/(?P<name>[^/]+)/deallocate")
def deallocate_vm(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    vm = ctx.state.vm(sub, group, name)
    if vm is None:
        return not_found("Microsoft.Compute/virtualMachines", name, group)
    failure = ctx.faults.take_operation_failure(req.path)
    return _lro_accepted(req, sub, ctx.state.begin_deallocate(vm, failure))


@route("DELETE", "vm_delete", _RG + _COMPUTE + r"/virtualMachines/(?P<name>[^/]+)")
def delete_vm(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    vm = ctx.state.vm(sub, group, name)
    if vm is None:
        return Response(204)  # ARM: deleting what is not there is a success with no content
    failure = ctx.faults.take_operation_failure(req.path)
    return _lro_accepted(req, sub, ctx.state.begin_delete(vm, failure))


@route(
    "GET", "operation", _SUB + _COMPUTE + r"/locations/(?P<location>[^/]+)/operations/(?P<op>[^/]+)"
)
def poll_operation(ctx: Context, req: Request, sub: str, location: str, op: str) -> Response:
    operation = ctx.state.poll(op)
    if operation is None:
        return arm_error(404, "NotFound", f"The operation '{op}' was not found.")
    if req.query.get("monitor", "").lower() == "true":
        # The Location URL: 202 while running, then 200 with the (empty) final result.
        if operation.status == "InProgress":
            return Response(
                202,
                b"",
                {
                    "Location": f"{req.base_url}{req.path}?{urlencode(req.query)}",
                    "Retry-After": "0",
                },
            )
        return Response(200)
    return json_response(200, wire.async_operation(operation))


# -- Microsoft.Compute: managed disks --------------------------------------------------


@route("GET", "disk_list", _SUB + _COMPUTE + r"/disks")
def list_disks(ctx: Context, req: Request, sub: str) -> Response:
    if missing := _subscription_or_404(ctx, sub):
        return missing
    return paged(ctx, req, ctx.state.disks_in(sub), wire.disk, sub)


@route("GET", "disk_list_by_group", _RG + _COMPUTE + r"/disks")
def list_disks_by_group(ctx: Context, req: Request, sub: str, group: str) -> Response:
    if missing := _subscription_or_404(ctx, sub):
        return missing
    return paged(ctx, req, ctx.state.disks_in(sub, group), wire.disk, sub)


@route("GET", "disk_get", _RG + _COMPUTE + r"/disks/(?P<name>[^/]+)")
def get_disk(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    if missing := _scope_missing(ctx, sub, group):
        return missing
    disk = ctx.state.disk(sub, group, name)
    if disk is None:
        return not_found("Microsoft.Compute/disks", name, group)
    return json_response(200, wire.disk(disk))


@route("DELETE", "disk_delete", _RG + _COMPUTE + r"/disks/(?P<name>[^/]+)")
def delete_disk(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    disk = ctx.state.disk(sub, group, name)
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
    return _lro_accepted(req, sub, ctx.state.begin_delete_disk(disk, failure))


# -- what reaping reads: a group's tags, management locks, missing scopes ---------------------


def _scope_missing(ctx: Context, sub: str, group: str) -> Response | None:
    """ARM names the missing scope: a resource under it is not "not found", it is unreadable."""
    if missing := _subscription_or_404(ctx, sub):
        return missing
    found = ctx.state.subscription(sub)
    if found is None or group.casefold() not in found.groups:
        return arm_error(
            404, "ResourceGroupNotFound", f"Resource group '{group}' could not be found."
        )
    return None


@route("GET", "resource_group_get", _RG)
def get_group(ctx: Context, req: Request, sub: str, group: str) -> Response:
    if missing := _scope_missing(ctx, sub, group):
        return missing
    found = ctx.state.subscription(sub)
    assert found is not None
    return json_response(200, wire.resource_group(found, found.groups[group.casefold()]))


@route(
    "GET", "locks_list", r"(?P<scope>/subscriptions/.+?)/providers/Microsoft\.Authorization/locks"
)
def list_locks(ctx: Context, req: Request, scope: str) -> Response:
    sub = scope.split("/")[2]
    if missing := _subscription_or_404(ctx, sub):
        return missing
    return paged(ctx, req, locks_at(ctx.state, scope), wire.management_lock, sub)

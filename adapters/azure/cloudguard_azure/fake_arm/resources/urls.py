"""Microsoft.Resources' routes: subscriptions and resource groups, and every provider's
resources as Microsoft.Resources lists, reads and deletes them by id (api-versions as each
provider lists them), groups deleted whole; ARM refuses a delete a lock covers."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlencode

from cloudguard_azure.fake_arm import inventory, operations
from cloudguard_azure.fake_arm.authorization.models import locks_at
from cloudguard_azure.fake_arm.resources import models, responses
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
    subscription_not_found,
)

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.operations import Operation


@route("GET", "subscriptions_list", r"/subscriptions")
def list_subscriptions(ctx: Context, req: Request) -> Response:
    subs = sorted(ctx.state.subscriptions.values(), key=lambda s: s.id)
    return paged(ctx, req, subs, responses.subscription, "")


@route("GET", "subscriptions_get", SUB)
def get_subscription(ctx: Context, req: Request, sub: str) -> Response:
    found = ctx.state.subscription(sub)
    if found is None:
        return subscription_not_found(sub)
    return json_response(200, responses.subscription(found))


@route("GET", "resource_groups_list", SUB + r"/resourceGroups")
def list_groups(ctx: Context, req: Request, sub: str) -> Response:
    found = ctx.state.subscription(sub)
    if found is None:
        return subscription_not_found(sub)
    groups = sorted(found.groups.values(), key=lambda g: g.name.casefold())
    return paged(ctx, req, groups, lambda g: responses.resource_group(found, g), sub)


@route("GET", "resource_group_get", GROUP)
def get_group(ctx: Context, req: Request, sub: str, group: str) -> Response:
    if missing := scope_missing(ctx, sub, group):
        return missing
    found = ctx.state.subscription(sub)
    assert found is not None
    return json_response(200, responses.resource_group(found, found.groups[group.casefold()]))


# -- every provider's resources, as Microsoft.Resources lists, reads and deletes them -------


def _expand(req: Request) -> set[str]:
    return {part.strip().casefold() for part in req.query.get("$expand", "").split(",") if part}


@route("GET", "resources_list", SUB + r"/resources")
def list_resources(ctx: Context, req: Request, sub: str) -> Response:
    if ctx.state.subscription(sub) is None:
        return subscription_not_found(sub)
    expand = _expand(req)
    found = inventory.resources_in(ctx.state, sub)
    return paged(ctx, req, found, lambda r: responses.listed_resource(r, expand), sub)


@route("GET", "resources_list_by_group", GROUP + r"/resources")
def list_group_resources(ctx: Context, req: Request, sub: str, group: str) -> Response:
    if missing := scope_missing(ctx, sub, group):
        return missing
    expand = _expand(req)
    found = inventory.resources_in(ctx.state, sub, group)
    return paged(ctx, req, found, lambda r: responses.listed_resource(r, expand), sub)


@route("GET", "provider_get", SUB + r"/providers/(?P<namespace>[^/]+)")
def get_provider(ctx: Context, req: Request, sub: str, namespace: str) -> Response:
    if ctx.state.subscription(sub) is None:
        return subscription_not_found(sub)
    prefix = namespace.casefold() + "/"
    types = {
        arm_type.split("/", 1)[1]: versions
        for arm_type, versions in models.API_VERSIONS.items()
        if arm_type.startswith(prefix)
    }
    for found in ctx.state.generic.values():
        if found.arm_type.casefold().startswith(prefix):
            name = found.arm_type.split("/", 1)[1]
            types.setdefault(name, models.api_versions(found.arm_type))
    return json_response(200, responses.provider(sub, namespace, types))


_BY_ID = GROUP + r"/providers/(?P<namespace>[^/]+)/(?P<kind>[^/]+)/(?P<name>[^/]+)"


def _versioned(req: Request, namespace: str, kind: str) -> Response | None:
    """ARM refuses an api-version its provider does not list for the type."""
    supported = models.api_versions(f"{namespace}/{kind}")
    given = req.query.get("api-version", "")
    if given in supported:
        return None
    return arm_error(
        400,
        "NoRegisteredProviderFound",
        f"No registered resource provider found for location 'westeurope' and API version "
        f"'{given}' for type '{kind}'. The supported api-versions are "
        f"'{', '.join(supported)}'.",
    )


@route("GET", "resource_get_by_id", _BY_ID)
def get_by_id(
    ctx: Context, req: Request, sub: str, group: str, namespace: str, kind: str, name: str
) -> Response:
    if missing := scope_missing(ctx, sub, group) or _versioned(req, namespace, kind):
        return missing
    found = models.generic(ctx.state, req.path)
    if found is None:
        return not_found(f"{namespace}/{kind}", name, group)
    return json_response(200, responses.generic_resource(found))


@route("DELETE", "resource_delete_by_id", _BY_ID)
def delete_by_id(
    ctx: Context, req: Request, sub: str, group: str, namespace: str, kind: str, name: str
) -> Response:
    if refused := _versioned(req, namespace, kind):
        return refused
    found = models.generic(ctx.state, req.path)
    if found is None:
        return Response(204)
    if locked := _locked(ctx, found.id):
        return locked

    def finish() -> None:
        with ctx.state.lock:
            ctx.state.generic.pop(found.id.casefold(), None)

    failure = ctx.faults.take_operation_failure(req.path)
    return _operation_accepted(
        req, sub, operations.begin(ctx.state, found.location, finish, failure)
    )


@route("DELETE", "resource_group_delete", GROUP)
def delete_group(ctx: Context, req: Request, sub: str, group: str) -> Response:
    found = ctx.state.subscription(sub)
    if found is None:
        return subscription_not_found(sub)
    held = found.groups.get(group.casefold())
    if held is None:
        return Response(204)
    scope = f"/subscriptions/{found.id}/resourceGroups/{held.name}"
    members = [r.id for r in inventory.resources_in(ctx.state, sub, held.name)]
    for target in (scope, *members):
        if locked := _locked(ctx, target):
            return locked

    def finish() -> None:
        models.remove_group(ctx.state, found, held)

    failure = ctx.faults.take_operation_failure(req.path)
    return _operation_accepted(
        req, sub, operations.begin(ctx.state, held.location, finish, failure)
    )


@route("GET", "operation_result", SUB + r"/operationresults/(?P<op>[^/]+)")
def poll_operation_result(ctx: Context, req: Request, sub: str, op: str) -> Response:
    """The Location of a group's or a resource's delete: 202 while running, then 200, or the
    operation's ARM error when it failed."""
    operation = operations.poll(ctx.state, op)
    if operation is None:
        return arm_error(404, "NotFound", f"The operation '{op}' was not found.")
    if operation.status == "InProgress":
        return Response(202, b"", {"Location": f"{req.base_url}{req.path}?{urlencode(req.query)}",
                                   "Retry-After": "0"})  # fmt: skip
    if operation.status == "Failed" and operation.error is not None:
        return arm_error(409, *operation.error)
    return Response(200)


def _operation_accepted(req: Request, sub: str, op: Operation) -> Response:
    api = req.query.get("api-version", "")
    return accepted({"Location": f"{req.base_url}/subscriptions/{sub}/operationresults/{op.id}"
                                 f"?api-version={api}"})  # fmt: skip


def _locked(ctx: Context, resource_id: str) -> Response | None:
    """ARM refuses to delete what a CanNotDelete or ReadOnly lock covers (ScopeLocked)."""
    for lock in locks_at(ctx.state, resource_id):
        if lock.level.casefold() in ("cannotdelete", "readonly"):
            return arm_error(
                409,
                "ScopeLocked",
                f"The scope '{resource_id}' cannot perform delete operation because following "
                f"scope(s) are locked: '{lock.scope}'. Please remove the lock and try again.",
            )
    return None

"""Microsoft.Resources' routes: list and read subscriptions and resource groups."""

from __future__ import annotations

from cloudguard_azure.fake_arm.resources import responses
from cloudguard_azure.fake_arm.routing import (
    GROUP,
    SUB,
    Context,
    Request,
    Response,
    json_response,
    paged,
    route,
    scope_missing,
    subscription_not_found,
)


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

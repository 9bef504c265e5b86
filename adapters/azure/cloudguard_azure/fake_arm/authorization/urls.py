"""Microsoft.Authorization's route: the locks at a scope and the scopes above it."""

from __future__ import annotations

from cloudguard_azure.fake_arm.authorization import models, responses
from cloudguard_azure.fake_arm.routing import (
    Context,
    Request,
    Response,
    paged,
    route,
    subscription_or_404,
)


@route(
    "GET", "locks_list", r"(?P<scope>/subscriptions/.+?)/providers/Microsoft\.Authorization/locks"
)
def list_locks(ctx: Context, req: Request, scope: str) -> Response:
    sub = scope.split("/")[2]
    if missing := subscription_or_404(ctx, sub):
        return missing
    return paged(ctx, req, models.locks_at(ctx.state, scope), responses.management_lock, sub)

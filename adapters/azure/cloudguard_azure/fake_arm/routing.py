"""URL routing of the fake ARM, and what every provider's routes share.

Each provider's routes are in its folder (`compute/urls.py`, ...) and
register themselves with `route`; the server resolves a request against all
of them. ARM paths are case-insensitive (`resourceGroups` and
`resourcegroups` both appear in the SDKs and in nextLinks), so every pattern
is matched ignoring case. Handlers take a parsed `Request` and return a
`Response`; they never touch sockets, so they can be read (and tested)
without the server.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from cloudguard_azure.fake_arm import wire

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.faults import Faults
    from cloudguard_azure.fake_arm.state import ArmState


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
SUB = r"/subscriptions/(?P<sub>[^/]+)"
GROUP = SUB + r"/resourceGroups/(?P<group>[^/]+)"
_ROUTES: list[tuple[str, str, re.Pattern[str], Handler]] = []
# Routes answered without a bearer token: a public API the fake also serves (retail prices).
ANONYMOUS: set[str] = set()


def route(
    method: str, name: str, pattern: str, *, anonymous: bool = False
) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        _ROUTES.append((method, name, re.compile(pattern + "/?$", re.IGNORECASE), handler))
        if anonymous:
            ANONYMOUS.add(name)
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


def subscription_not_found(sub: str) -> Response:
    return arm_error(404, "SubscriptionNotFound", f"The subscription '{sub}' could not be found.")


def subscription_or_404(ctx: Context, sub: str) -> Response | None:
    return subscription_not_found(sub) if ctx.state.subscription(sub) is None else None


def scope_missing(ctx: Context, sub: str, group: str) -> Response | None:
    """ARM names the missing scope: a resource under it is not "not found", it is unreadable."""
    if missing := subscription_or_404(ctx, sub):
        return missing
    found = ctx.state.subscription(sub)
    if found is None or group.casefold() not in found.groups:
        return arm_error(
            404, "ResourceGroupNotFound", f"Resource group '{group}' could not be found."
        )
    return None


def accepted(headers: dict[str, str]) -> Response:
    """202, with the headers a long-running operation's provider sends."""
    return Response(202, b"", {**headers, "Retry-After": "0"})

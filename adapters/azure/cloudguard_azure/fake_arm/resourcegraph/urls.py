"""Microsoft.ResourceGraph's route: `POST /providers/Microsoft.ResourceGraph/resources`.

The fake does not run KQL. It answers exactly the query shapes cloudguard's
Resource Graph engine sends (compared with whitespace folded) and refuses
anything else with 400 and ARM's error shape, so a change to a query the
fake has not learned is a failing test, not a silently wrong answer. The
request body is checked the same way: the subscriptions (1 to 1,000), `$top`
(1 to 1,000), `resultFormat: objectArray`, a `$skipToken` the fake issued.

Like the real service, it leaves out subscriptions the caller cannot read
(`Faults.forbid`) or that do not exist, without an error; it pages by an
opaque `$skipToken`; and every answer carries the per-user quota headers
(`resourcegraph.faults.GraphFaults`), with 429 once the quota is spent.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from cloudguard_azure.fake_arm.resourcegraph.responses import SHAPES, normalised
from cloudguard_azure.fake_arm.routing import Context, Request, Response, json_response, route

MAX_SUBSCRIPTIONS = 1000
MAX_TOP = 1000
_ALLOWED_BODY = {"subscriptions", "query", "options"}
_ALLOWED_OPTIONS = {"$top", "$skipToken", "$skip", "resultFormat", "allowPartialScopes"}


def _bad_request(message: str, headers: dict[str, str]) -> Response:
    body = {
        "error": {
            "code": "BadRequest",
            "message": "Please provide below info when asking for support: "
            "timestamp = 2026-01-05T09:00:00Z, correlationId = fake.",
            "details": [{"code": "InvalidQuery", "message": message}],
        }
    }
    return json_response(400, body, headers)


def _token(shape: str, offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps([shape, offset]).encode()).decode()


def _offset(token: str, shape: str) -> int | None:
    try:
        issued_for, offset = json.loads(base64.urlsafe_b64decode(token.encode()))
    except (ValueError, TypeError):
        return None
    if issued_for != shape or not isinstance(offset, int) or offset < 0:
        return None
    return offset


@route("POST", "resource_graph", r"/providers/Microsoft\.ResourceGraph/resources")
def query(ctx: Context, req: Request) -> Response:
    graph = ctx.faults.graph
    quota = graph.admit()
    headers = quota.headers()
    if not quota.admitted:
        throttled = {
            "error": {
                "code": "RateLimiting",
                "message": "Please provide below info when asking for support: "
                "timestamp = 2026-01-05T09:00:00Z, correlationId = fake. "
                "Too many requests. Please retry.",
            }
        }
        return json_response(429, throttled, headers)
    try:
        body = json.loads(req.body or b"null")
    except ValueError:
        return _bad_request("The request content is not valid JSON.", headers)
    problem = _check(body)
    if problem:
        return _bad_request(problem, headers)
    shape = SHAPES[normalised(body["query"])]
    options = body.get("options") or {}
    offset = 0
    if token := options.get("$skipToken"):
        found = _offset(token, shape.name)
        if found is None:
            return _bad_request(f"Invalid $skipToken {token!r}.", headers)
        offset = found
    readable = {
        s.casefold() for s in body["subscriptions"] if s.casefold() not in ctx.faults.forbidden
    }
    records = sorted(shape.select(ctx, readable), key=shape.order)
    size = min(int(options.get("$top", MAX_TOP)), graph.page_size or MAX_TOP)
    chunk = [shape.render(record) for record in records[offset : offset + size]]
    more = offset + size < len(records)
    answer: dict[str, Any] = {
        "totalRecords": len(records),
        "count": len(chunk),
        "data": chunk,
        "facets": [],
        "resultTruncated": "false",
    }
    if more and graph.take_truncation():
        answer["resultTruncated"] = "true"  # cut short, and nothing to continue from
    elif more:
        answer["$skipToken"] = _token(shape.name, offset + size)
    return json_response(200, answer, headers)


def _check(body: Any) -> str | None:
    """Why the body is not one the engine sends, or None."""
    if not isinstance(body, dict):
        return "The request content must be a JSON object."
    if unknown := set(body) - _ALLOWED_BODY:
        return f"Unsupported request properties: {sorted(unknown)}."
    subs = body.get("subscriptions")
    if not isinstance(subs, list) or not subs or not all(isinstance(s, str) for s in subs):
        return "subscriptions must be a non-empty list of subscription ids."
    if len(subs) > MAX_SUBSCRIPTIONS:
        return f"At most {MAX_SUBSCRIPTIONS} subscriptions may be queried at once."
    query_text = body.get("query")
    if not isinstance(query_text, str) or normalised(query_text) not in SHAPES:
        return f"Query is invalid (the fake answers only cloudguard's shapes): {query_text!r}."
    options = body.get("options") or {}
    if not isinstance(options, dict):
        return "options must be an object."
    if unknown := set(options) - _ALLOWED_OPTIONS:
        return f"Unsupported options: {sorted(unknown)}."
    top = options.get("$top", MAX_TOP)
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= MAX_TOP:
        return f"$top must be between 1 and {MAX_TOP}."
    if options.get("$skip", 0) != 0:
        return "$skip is not used with $skipToken paging."
    if options.get("resultFormat", "objectArray") != "objectArray":
        return "resultFormat must be objectArray."
    if options.get("allowPartialScopes", False) is not False:
        return "allowPartialScopes is not used."
    return None

"""JSON shapes every ARM provider shares: paging, errors, long-running operations, times.

Each provider's own shapes are in its folder (`compute/responses.py`, ...),
as moto keeps a service's responses beside its models. The real azure-mgmt-*
clients deserialize every one of them in the tests, which is the proof that
the shapes are right.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.operations import Operation

Json = dict[str, Any]


def arm_time(moment: datetime) -> str:
    """ARM's form: seven fractional digits and an offset, 2016-12-28T04:41:35.9278721+00:00."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f") + "0+00:00"


def page(values: list[Json], next_link: str | None) -> Json:
    body: Json = {"value": values}
    if next_link:
        body["nextLink"] = next_link
    return body


def async_operation(op: Operation) -> Json:
    """The Azure-AsyncOperation status body."""
    body: Json = {"startTime": arm_time(op.started), "status": op.status, "name": op.id}
    if op.ended is not None:
        body["endTime"] = arm_time(op.ended)
    if op.status == "Failed" and op.error is not None:
        body["error"] = {"code": op.error[0], "message": op.error[1]}
    return body


def error(code: str, message: str) -> Json:
    """ARM's error envelope (CloudError)."""
    return {"error": {"code": code, "message": message}}


def encode(body: Json) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()

"""Paged ARM listings read page by page, resumable from the last nextLink.

The requests go through the management client's own pipeline (its
authentication, retry and quota policies) with `send_request`; the pages are
read as JSON rather than through the SDK's models. Deserializing every VM
into azure-mgmt-compute's model tree was three quarters of the sweep's client
CPU (profiled: `model_base._deserialize_with_callable`), and the sweep reads
seven fields of each.

A `Listing` remembers what it has read and where to go on: when a page fails
after all its retries, the subscription's second attempt resumes at that
page's nextLink instead of re-reading the pages before it. A page is taken
whole or not at all.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from azure.core.exceptions import (
    ClientAuthenticationError,
    DecodeError,
    HttpResponseError,
    IncompleteReadError,
    ResourceNotFoundError,
    ServiceRequestError,
    ServiceResponseError,
)
from azure.core.rest import HttpRequest
from azure.mgmt.core.exceptions import ARMErrorFormat

from cloudguard.cloud.records import Resource

# Worth a second attempt of the subscription: throttling, server trouble, a
# broken connection or a page cut short. Not 401/403/404: those stay as they are.
_TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})


class UnreadablePage(DecodeError):
    """A 200 whose body is not the JSON page it should be (cut short by a proxy, say)."""


@dataclass
class Listing:
    """One paged listing of one subscription: its first URL, progress, and what was read."""

    name: str  # for messages: "virtualMachines.list_all statusOnly=true"
    url: str  # the first page with its query, relative to the endpoint
    take: Callable[[dict[str, Any]], Resource | None]  # item -> resource, or None to skip
    client: str = "compute"  # whose pipeline sends it: the compute or the resources client
    next_link: str | None = None
    pages: int = 0
    done: bool = False
    resources: list[Resource] = field(default_factory=list)

    def read(self, client: Any) -> None:
        """Read the remaining pages, from where the last read stopped."""
        while not self.done:
            # A nextLink carries its own query (api-version, $skiptoken).
            request = HttpRequest("GET", self.next_link or self.url)
            request.headers["Accept"] = "application/json"
            values, next_link = _page(client.send_request(request))
            taken = [r for r in map(self.take, values) if r is not None]
            # Only a whole page moves the listing on.
            self.resources.extend(taken)
            self.pages += 1
            self.next_link = next_link
            self.done = not next_link


def _page(response: Any) -> tuple[list[dict[str, Any]], str | None]:
    status = response.status_code
    if status != 200:
        error_type = {401: ClientAuthenticationError, 404: ResourceNotFoundError}.get(
            status, HttpResponseError
        )
        raise error_type(response=response, error_format=ARMErrorFormat)
    body = response.body()
    try:
        page = json.loads(body)
    except ValueError as exc:
        raise UnreadablePage(
            f"page is not valid JSON ({len(body)} bytes): {exc}", response=response
        ) from exc
    values = page.get("value") if isinstance(page, dict) else None
    if not isinstance(values, list):
        raise UnreadablePage("page has no `value` list", response=response)
    next_link = page.get("nextLink")
    return values, next_link if isinstance(next_link, str) and next_link else None


def is_transient(exc: BaseException) -> bool:
    """A failure a later attempt may not meet again."""
    if isinstance(exc, ServiceRequestError | ServiceResponseError | IncompleteReadError):
        return True
    if isinstance(exc, UnreadablePage):
        return True
    return isinstance(exc, HttpResponseError) and exc.status_code in _TRANSIENT_STATUS

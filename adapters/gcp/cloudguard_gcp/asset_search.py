"""Cloud Asset Inventory's `searchAllResources` over one scope, every page, as Resources.

One paged search per scope (a project, a folder, an organization: every project
under it at once), `page_size` 500, the most a page holds: a scope of any number
of projects costs ceil(results / 500) requests. Each page is asked for with its
own retry budget and taken whole; a page that still fails fails the scope (the
sweep reports it unread, never a part of it). Each result becomes a `Resource`
through the offline export's own reader (cloudguard_gcp.export.search_result:
`gcloud asset search-all-resources` prints the same camelCase fields), so the live
and offline paths cannot disagree.
"""

from __future__ import annotations

from typing import Any

from cloudguard.cloud.records import Resource, SweepRequest
from cloudguard_gcp import clients
from cloudguard_gcp.export import search_result

PAGE_SIZE = 500  # the most results one searchAllResources page holds (Google caps it there)


class IncompleteAnswer(Exception):
    """The API answered, but not all of it (a page token seen twice): the scope is unread."""


def search(client: Any, request: SweepRequest, scope: str) -> list[Resource]:
    """Every resource of `scope`, every page followed by its `next_page_token`."""
    source = f"gcp:{scope}"
    resources: list[Resource] = []
    token = ""
    tokens: set[str] = set()
    while True:
        page = clients.first_page(
            client.search_all_resources,
            request,
            scope=scope,
            page_size=PAGE_SIZE,
            page_token=token,
        )
        resources.extend(search_result(as_json(result), source) for result in page.results)
        token = page.next_page_token
        if not token:
            return resources
        if token in tokens:
            raise IncompleteAnswer(f"searchAllResources handed back page token {token!r} twice")
        tokens.add(token)


def as_json(result: Any) -> dict[str, Any]:
    """A ResourceSearchResult message as the REST API (and gcloud) spell it: the fields the
    export reader takes."""
    created = result.create_time
    return {
        "name": result.name,
        "assetType": result.asset_type,
        "project": result.project,
        "displayName": result.display_name,
        "location": result.location,
        "labels": dict(result.labels),
        "state": result.state,
        "createTime": created.isoformat() if created else "",
    }

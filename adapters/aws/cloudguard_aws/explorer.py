"""Every tagged resource of an account in one search: AWS Resource Explorer's aggregator index.

Where Resource Explorer is set up with an aggregator index, one `Search` in
that index's region (an empty query, paged) names every indexed resource of
every region, instead of one Tagging API listing per region. The index is
found with `ListIndexes(Type=AGGREGATOR)`. A search counts at most 1,000
resources (`Count.Complete` false beyond that): such an answer is not taken as
the account's whole, and the sweep reads the Tagging API per region instead.

`--aws-engine auto` (the default) uses the index when `ListIndexes` names one
and reads the Tagging API otherwise, including when Resource Explorer cannot
be asked (not set up, not allowed); `resource-explorer` requires it (a failure
is named: exit 75); `tagging` never asks. With `--management-endpoint` (a
fake, a VPC endpoint) Resource Explorer is asked only at
`--resource-explorer-endpoint`, which the endpoint rule judges as it judges
`--management-endpoint` (cloudguard.cloud.endpoints): the sweep's credential goes
there only if it may (else EndpointRefused, nothing sent). boto3 is imported by the
session's clients.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from cloudguard.cloud.endpoints import credential_for
from cloudguard.cloud.records import Resource, SweepRequest
from cloudguard_aws.export import tagged_resource
from cloudguard_aws.options import AWS_ENGINE, RESOURCE_EXPLORER_ENDPOINT
from cloudguard_aws.session import ENDPOINTS, make_client

SERVICE = "resource-explorer-2"
AUTO, REQUIRED = "auto", "resource-explorer"


class ExplorerUnavailable(Exception):
    """Resource Explorer was required and could not be used."""


def wanted(request: SweepRequest) -> str | None:
    """How the sweep may use Resource Explorer: AUTO, REQUIRED, or None (never)."""
    engine = AWS_ENGINE.value_in(request.settings)
    if engine == "tagging":
        return None
    if request.endpoint and not RESOURCE_EXPLORER_ENDPOINT.value_in(request.settings):
        if engine == REQUIRED:
            raise ExplorerUnavailable(
                "--aws-engine resource-explorer with --management-endpoint needs "
                "--resource-explorer-endpoint"
            )
        return None  # the requests go elsewhere than AWS: never AWS's Resource Explorer
    return str(engine)


def aggregator_region(session: Any, request: SweepRequest, seed: str) -> str | None:
    """The region of the account's aggregator index, or None when there is none."""
    client = make_client(session, _addressed(request), SERVICE, seed)
    indexes = [
        index
        for page in client.get_paginator("list_indexes").paginate(Type="AGGREGATOR")
        for index in page.get("Indexes", [])
    ]
    return str(indexes[0]["Region"]) if indexes else None


def search(session: Any, request: SweepRequest, region: str, account: str) -> list[Resource] | None:
    """Every indexed resource, or None when the index's answer is not complete."""
    client = make_client(session, _addressed(request), SERVICE, region)
    found: list[Resource] = []
    for page in client.get_paginator("search").paginate(QueryString=""):
        if not page.get("Count", {}).get("Complete", False):
            return None
        for item in page.get("Resources", []):
            tags = next(
                (p.get("Data") for p in item.get("Properties", []) if p.get("Name") == "tags"),
                None,
            )
            source = f"aws:{item.get('Region') or region}"
            found.append(
                tagged_resource(
                    item["Arn"], tags, source, str(item.get("Region") or ""),
                    str(item.get("OwningAccountId") or account),
                )
            )  # fmt: skip
    return found


def _addressed(request: SweepRequest) -> SweepRequest:
    """The request at Resource Explorer's endpoint; EndpointRefused (nothing sent) when the
    sweep's credential may not go there."""
    endpoint = RESOURCE_EXPLORER_ENDPOINT.value_in(request.settings)
    if not endpoint:
        return request
    credential_for(ENDPOINTS, endpoint, request.credential)
    return replace(request, endpoint=endpoint)

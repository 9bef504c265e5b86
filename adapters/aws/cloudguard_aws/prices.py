"""AWS's prices from its own list: the Price List Query API (`pricing:GetProducts`).

One `GetProducts` per distinct price the audit needs, in us-east-1 (one of the
three regions that host the API), with `TERM_MATCH` filters, paged by
`NextToken`; each answer's items are JSON documents whose `terms.OnDemand`
price dimensions hold the price per unit in USD.

- an instance: `instanceType`, `regionCode`, Linux, shared tenancy, no
  pre-installed software, capacity status Used; per hour (`Hrs`);
- an EBS volume: `productFamily` Storage with its `volumeApiName` (gp3, ...);
  per GiB-month (`GB-Mo`), so per hour that price x its GiB / 730;
- an Elastic IP: the public IPv4 address's hourly charge, which this list
  files under another service: priced from the bundled table alone.

Where it is read: `--price-list-endpoint URL` (the adapter's option), else
AWS's own endpoint, but never when `--management-endpoint` names another
endpoint and no price endpoint was given: a sweep of moto (or through a VPC
endpoint) does not send its questions to AWS on its own. The session is the
sweep's (`--credential`), made only when a price is asked for, and only where the
endpoint rule lets it go (cloudguard.cloud.endpoints: EndpointRefused, nothing sent).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from cloudguard.cloud import kinds
from cloudguard.cloud.pricing import HOURS_PER_MONTH, ListedPrice, PriceListError, PriceQuery
from cloudguard.cloud.records import Resource, SweepRequest
from cloudguard_aws.options import PRICE_LIST_ENDPOINT
from cloudguard_aws.session import make_client, open_session

SOURCE = "AWS Price List Query API"
PRICING_REGION = "us-east-1"
PUBLIC_IPV4 = "public-ipv4"  # an Elastic IP's price, by the bundled table's name
_VOLUME = re.compile(r"^(?P<type>\S+) (?P<size>\d+) GiB$")
_INSTANCE_TERMS = {
    "operatingSystem": "Linux",
    "tenancy": "Shared",
    "preInstalledSw": "NA",
    "capacitystatus": "Used",
}


def price_query(resource: Resource) -> PriceQuery | None:
    if resource.kind == kinds.VM and resource.size:
        return PriceQuery(kinds.VM, resource.size, resource.region)
    volume = _VOLUME.match(resource.size) if resource.kind == kinds.DISK else None
    if volume is not None:
        return PriceQuery(kinds.DISK, volume["type"], resource.region, float(volume["size"]))
    if resource.kind == kinds.PUBLIC_IP:
        return PriceQuery(kinds.PUBLIC_IP, PUBLIC_IPV4, resource.region)
    return None


def price_list(
    request: SweepRequest, session_factory: Callable[[SweepRequest], Any]
) -> PriceListQuery | None:
    endpoint = PRICE_LIST_ENDPOINT.value_in(request.settings)
    if endpoint is None and request.endpoint:
        return None  # moto or a VPC endpoint: not AWS's price list from here
    return PriceListQuery(replace(request, endpoint=endpoint), session_factory)


@dataclass
class PriceListQuery:
    request: SweepRequest
    session_factory: Callable[[SweepRequest], Any]
    source: str = SOURCE

    def prices(self, queries: Sequence[PriceQuery]) -> Mapping[str, ListedPrice | None]:
        from botocore.exceptions import BotoCoreError, ClientError

        fetched = datetime.now(UTC).date().isoformat()
        try:
            session = open_session(self.request, self.session_factory)
            client = make_client(session, self.request, "pricing", PRICING_REGION)
            return {query.key: self._price(client, query, fetched) for query in queries}
        except (BotoCoreError, ClientError, KeyError, ValueError) as exc:
            raise PriceListError(str(exc)) from exc

    def _price(self, client: Any, query: PriceQuery, fetched: str) -> ListedPrice | None:
        if query.kind not in (kinds.VM, kinds.DISK):
            return None  # not asked of this list (an Elastic IP: the bundled table)
        if query.kind == kinds.VM:
            terms = {"instanceType": query.sku, "regionCode": query.region, **_INSTANCE_TERMS}
            unit, per_hour = "Hrs", 1.0
        else:
            terms = {"productFamily": "Storage", "volumeApiName": query.sku,
                     "regionCode": query.region}  # fmt: skip
            unit, per_hour = "GB-Mo", 1.0 / HOURS_PER_MONTH
        filters = [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in terms.items()]
        pages = client.get_paginator("get_products").paginate(
            ServiceCode="AmazonEC2", Filters=filters, FormatVersion="aws_v1"
        )
        for page in pages:
            for text in page.get("PriceList", []):
                found = _on_demand(json.loads(text), unit)
                if found is not None:
                    usd, description = found
                    return ListedPrice(usd * per_hour, "USD", SOURCE, fetched, description)
        return None


def _on_demand(item: Mapping[str, Any], unit: str) -> tuple[float, str] | None:
    """The on-demand price per `unit` in USD of one Price List item."""
    for term in item.get("terms", {}).get("OnDemand", {}).values():
        for dimension in term.get("priceDimensions", {}).values():
            usd = dimension.get("pricePerUnit", {}).get("USD")
            if dimension.get("unit") == unit and usd is not None:
                return float(usd), str(dimension.get("description") or "")
    return None

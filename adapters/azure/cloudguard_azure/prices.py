"""Azure's prices from its own list: the Azure Retail Prices API (prices.azure.com).

Public, unauthenticated REST: `GET /api/retail/prices?api-version=2023-01-01-preview
&$filter=...`, an OData filter of `eq` clauses on armSkuName, armRegionName,
priceType, serviceName and the meter's own names; pages of `Items` linked by
`NextPageLink`. No token is sent anywhere: there is none to leak.

What is priced, and by which meter (pay-as-you-go, `priceType eq 'Consumption'`):

- a VM: its `armSkuName` in its region, the Linux meter (a product name
  without "Windows"), not Spot or Low Priority, per hour;
- a public IP: `Standard IPv4 Static Public IP`, per hour;
- a Kubernetes cluster of the Standard tier: `Standard Uptime SLA`, per hour
  (its nodes are VMs of their own).

Where it is read: `--retail-prices-endpoint URL` (the adapter's option), else
prices.azure.com, but never when the sweep's management endpoint is another
one and no price endpoint was given: a sweep of a fake (or a sovereign cloud)
does not send its questions to the public cloud's list on its own. Requests
go through azure-core's pipeline with the sweep's retry budget.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from cloudguard.cloud import kinds
from cloudguard.cloud.endpoints import is_loopback_endpoint
from cloudguard.cloud.pricing import ListedPrice, PriceListError, PriceQuery
from cloudguard.cloud.records import Resource, SweepRequest
from cloudguard_azure.options import RETAIL_PRICES_ENDPOINT

PUBLIC_ENDPOINT = "https://prices.azure.com"
API_VERSION = "2023-01-01-preview"
SOURCE = "Azure Retail Prices API"
MAX_PAGES = 20  # a filter this narrow answers in one page; more is a filter gone wrong


def region_name(region: str) -> str:
    """`West Europe` -> `westeurope`, as armRegionName spells it."""
    return region.replace(" ", "").casefold()


def price_query(resource: Resource) -> PriceQuery | None:
    region = region_name(resource.region)
    if resource.kind == kinds.VM and resource.size:
        return PriceQuery(kinds.VM, resource.size, region)
    if resource.kind == kinds.PUBLIC_IP:
        return PriceQuery(kinds.PUBLIC_IP, "Standard IPv4 Static Public IP", region)
    if resource.kind == kinds.KUBERNETES_CLUSTER and "standard" in resource.size.casefold():
        return PriceQuery(kinds.KUBERNETES_CLUSTER, "Standard Uptime SLA", region)
    return None


def price_list(request: SweepRequest) -> RetailPrices | None:
    endpoint = RETAIL_PRICES_ENDPOINT.value_in(request.settings)
    if endpoint is None:
        if request.endpoint:
            return None  # a faked or sovereign management endpoint: not the public list
        return RetailPrices(PUBLIC_ENDPOINT, verify=True, retries=request.retries)
    # An endpoint given: trust it as the management endpoint is trusted (its CA bundle).
    return RetailPrices(endpoint, verify=request.ca_bundle or True, retries=request.retries)


@dataclass
class RetailPrices:
    """The Retail Prices API at `endpoint` (a `cloudguard.cloud.pricing.PriceList`)."""

    endpoint: str
    verify: str | bool
    retries: int
    source: str = SOURCE

    def prices(self, queries: Sequence[PriceQuery]) -> Mapping[str, ListedPrice | None]:
        from azure.core import PipelineClient
        from azure.core.exceptions import AzureError
        from azure.core.pipeline.policies import RetryPolicy, UserAgentPolicy
        from azure.core.pipeline.transport import RequestsTransport

        client: PipelineClient[Any, Any] = PipelineClient(
            base_url=self.endpoint.rstrip("/"),
            policies=[
                UserAgentPolicy("cloudguard-prices"),
                RetryPolicy(retry_total=self.retries, retry_backoff_factor=0.8),
            ],
            transport=RequestsTransport(
                connection_verify=self.verify,
                # A loopback endpoint is reached directly, never through an HTTPS_PROXY.
                use_env_settings=not is_loopback_endpoint(self.endpoint),
            ),
        )
        fetched = datetime.now(UTC).date().isoformat()
        answers: dict[str, ListedPrice | None] = {}
        try:
            with client:
                for query in queries:
                    items = self._items(client, _filter(query))
                    answers[query.key] = _choose(query, items, fetched)
        except (AzureError, ValueError, KeyError, TypeError) as exc:
            raise PriceListError(f"{self.endpoint}: {exc}") from exc
        return answers

    def _items(self, client: Any, odata: str) -> list[dict[str, Any]]:
        from azure.core.rest import HttpRequest

        url: str | None = (
            f"{self.endpoint.rstrip('/')}/api/retail/prices?api-version={API_VERSION}"
            f"&$filter={quote(odata)}"
        )
        items: list[dict[str, Any]] = []
        for _ in range(MAX_PAGES):
            if not url:
                return items
            response = client.send_request(HttpRequest("GET", url))
            if response.status_code != 200:
                raise ValueError(f"HTTP {response.status_code}: {response.text()[:200]}")
            page = response.json()
            items += list(page["Items"])
            url = page.get("NextPageLink")
        raise ValueError(f"more than {MAX_PAGES} pages for {odata!r}")


def _filter(query: PriceQuery) -> str:
    region = f"armRegionName eq '{_literal(query.region)}' and priceType eq 'Consumption'"
    if query.kind == kinds.VM:
        return (
            f"serviceName eq 'Virtual Machines' and {region} "
            f"and armSkuName eq '{_literal(query.sku)}'"
        )
    service = "Virtual Network" if query.kind == kinds.PUBLIC_IP else "Azure Kubernetes Service"
    return f"serviceName eq '{service}' and {region} and meterName eq '{_literal(query.sku)}'"


def _literal(value: str) -> str:
    return value.replace("'", "''")  # OData doubles a quote inside a string literal


def _choose(query: PriceQuery, items: list[dict[str, Any]], fetched: str) -> ListedPrice | None:
    """The pay-as-you-go Linux meter, per hour, in the primary meter region."""
    for item in items:
        names = f"{item.get('productName', '')} {item.get('skuName', '')} {item['meterName']}"
        if (
            item.get("type") == "Consumption"
            and item.get("unitOfMeasure") == "1 Hour"
            and item.get("isPrimaryMeterRegion", True)
            and not any(word in names for word in ("Windows", "Spot", "Low Priority"))
        ):
            return ListedPrice(
                hourly=float(item["retailPrice"]),
                currency=str(item.get("currencyCode") or "USD"),
                source=SOURCE,
                fetched=fetched,
                detail=f"{item.get('productName', '')}: {item['meterName']}",
            )
    return None

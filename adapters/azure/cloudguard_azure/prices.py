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
  (its nodes are VMs of their own);
- a managed disk: its tier's meter (`P10 LRS`: the SKU's letter, P/E/S for
  Premium SSD, Standard SSD, Standard HDD, and the smallest tier that holds
  its size), per month, so per hour the month's price / 730. Ultra and
  Premium SSD v2 disks bill per GiB, IOPS and throughput: not priced.

Where it is read: `--retail-prices-endpoint URL` (the adapter's option), else
prices.azure.com, but never when the sweep's management endpoint is another
one and no price endpoint was given: a sweep of a fake (or a sovereign cloud)
does not send its questions to the public cloud's list on its own. Requests
go through azure-core's pipeline with the sweep's retry budget.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from cloudguard.cloud import kinds
from cloudguard.cloud.endpoints import is_loopback_endpoint
from cloudguard.cloud.pricing import HOURS_PER_MONTH, ListedPrice, PriceListError, PriceQuery
from cloudguard.cloud.records import Resource, SweepRequest
from cloudguard_azure.options import RETAIL_PRICES_ENDPOINT

PUBLIC_ENDPOINT = "https://prices.azure.com"
API_VERSION = "2023-01-01-preview"
SOURCE = "Azure Retail Prices API"
MAX_PAGES = 20  # a filter this narrow answers in one page; more is a filter gone wrong


def region_name(region: str) -> str:
    """`West Europe` -> `westeurope`, as armRegionName spells it."""
    return region.replace(" ", "").casefold()


# Managed disk tiers: the largest size (GiB) each holds, smallest first, as Azure bills
# them (a 100 GiB Premium disk bills as a P10, 128 GiB).
_TIER_SIZES = (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32767)
_TIER_NUMBERS = (1, 2, 3, 4, 6, 10, 15, 20, 30, 40, 50, 60, 70, 80)
_DISK_SKUS = {"premium": "P", "standardssd": "E", "standard": "S"}  # SKU name -> tier letter
_DISK = re.compile(r"^(?P<sku>[A-Za-z]+)_(?P<redundancy>LRS|ZRS) (?P<size>\d+) GiB$")


def disk_tier(size: str) -> str | None:
    """`Premium_LRS 100 GiB` -> `P10 LRS`, the meter the price list names; None for a disk
    billed otherwise (Ultra, Premium v2), of unknown size, or larger than any tier."""
    found = _DISK.match(size)
    letter = _DISK_SKUS.get(found["sku"].casefold()) if found else None
    if found is None or letter is None:
        return None
    gib = int(found["size"])
    for largest, number in zip(_TIER_SIZES, _TIER_NUMBERS, strict=True):
        if gib <= largest:
            # Standard HDD starts at S4: a smaller one bills as the smallest tier.
            number = max(number, 4) if letter == "S" else number
            return f"{letter}{number} {found['redundancy']}"
    return None


def price_query(resource: Resource) -> PriceQuery | None:
    region = region_name(resource.region)
    if resource.kind == kinds.DISK and (tier := disk_tier(resource.size)) is not None:
        return PriceQuery(kinds.DISK, tier, region)
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
    if query.kind == kinds.DISK:
        return f"serviceName eq 'Storage' and {region} and skuName eq '{_literal(query.sku)}'"
    service = "Virtual Network" if query.kind == kinds.PUBLIC_IP else "Azure Kubernetes Service"
    return f"serviceName eq '{service}' and {region} and meterName eq '{_literal(query.sku)}'"


def _literal(value: str) -> str:
    return value.replace("'", "''")  # OData doubles a quote inside a string literal


def _choose(query: PriceQuery, items: list[dict[str, Any]], fetched: str) -> ListedPrice | None:
    """The pay-as-you-go Linux meter, per hour, in the primary meter region; a disk's
    monthly meter (its tier's `... Disk(s)`, not its operations or bursting), per 730 h."""
    unit, per_hour = (
        ("1/Month", 1 / HOURS_PER_MONTH) if query.kind == kinds.DISK else ("1 Hour", 1.0)
    )
    for item in items:
        names = f"{item.get('productName', '')} {item.get('skuName', '')} {item['meterName']}"
        if (
            item.get("type") == "Consumption"
            and item.get("unitOfMeasure") == unit
            and item.get("isPrimaryMeterRegion", True)
            and not any(word in names for word in ("Windows", "Spot", "Low Priority"))
            and (query.kind != kinds.DISK or str(item["meterName"]).endswith(("Disk", "Disks")))
        ):
            return ListedPrice(
                hourly=float(item["retailPrice"]) * per_hour,
                currency=str(item.get("currencyCode") or "USD"),
                source=SOURCE,
                fetched=fetched,
                detail=f"{item.get('productName', '')}: {item['meterName']}",
            )
    return None

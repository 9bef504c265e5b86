"""What a cloud's own price list is asked, and what it answers. Stdlib only; no cloud named.

An adapter says which price to look up for a resource (`CloudAdapter.price_query`:
its kind, the SKU the price list names, its region, how many units) and, for a
request, where its price list can be read (`CloudAdapter.price_list`: the Azure
Retail Prices API, the AWS Price List Query API). The auditor asks each list
once for every distinct query of the audit, keeps the answers in a dated cache
(cloudguard.audit.price_lists) and prices each finding from them; the bundled
table is only the offline fallback, and says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

# Hours in a month as the clouds' own calculators count them: a price per month (a GiB of
# storage, a disk) is this many hours' worth.
HOURS_PER_MONTH = 730.0


@dataclass(frozen=True)
class PriceQuery:
    """One price to look up: the `kind` of resource, the `sku` the price list names it by
    (an Azure armSkuName or meter, an EC2 instance type, an EBS volume type), its region,
    and how many of the price's units one resource is (GiB of a volume; 1 otherwise)."""

    kind: str
    sku: str
    region: str
    quantity: float = 1.0

    @property
    def key(self) -> str:
        """What the answer is filed under (the quantity is the resource's, not the price's)."""
        return f"{self.kind}|{self.sku.casefold()}|{self.region.casefold().replace(' ', '')}"


@dataclass(frozen=True)
class ListedPrice:
    """A price list's answer: per hour for one unit, where it came from and when."""

    hourly: float
    currency: str
    source: str  # the list's name, e.g. "Azure Retail Prices API"
    fetched: str  # ISO date the list answered
    detail: str = ""  # what it priced (meter, product), for the reader


class PriceListError(Exception):
    """The price list could not be read (unreachable, refused, malformed): the audit goes on
    with the cache and the bundled table, and says so."""


class PriceList(Protocol):
    """One cloud's price list, reached with one request's identity and endpoint."""

    source: str  # its name, shown beside every figure it priced

    def prices(self, queries: Sequence[PriceQuery]) -> Mapping[str, ListedPrice | None]:
        """Each query's price by `PriceQuery.key`; None: the list has no such price. Raises
        `PriceListError` when it cannot be read at all."""
        ...

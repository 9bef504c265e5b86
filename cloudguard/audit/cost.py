"""Billable or not, and what it costs: the clouds' own price lists, else a bundled, dated table.

Prices come first from the clouds' price lists (`listed`, resolved for the
audit by cloudguard.audit.price_lists: the Azure Retail Prices API, the AWS
Price List Query API, through a dated cache), and otherwise from the bundled
table (`prices.json` beside this module: its date, currency and basis), the
offline fallback for VM sizes and the common other kinds (managed disk tiers,
EBS volumes per GiB, public IPs; what is listed per month counts 730 hours).
Each figure says which (`Cost.source`). A price no list and no table has is
"unknown", never zero. Which power states and kinds bill, how a size is
spelled, and which price a resource needs come from its cloud (`Cloud`, from
the registry the table is made with); with no adapter, nothing is known to
bill and the cost is unknown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any

from cloudguard.cloud.adapter_registry import Clouds, installed_clouds
from cloudguard.cloud.kinds import VM, Billing
from cloudguard.cloud.pricing import HOURS_PER_MONTH, ListedPrice
from cloudguard.cloud.records import Resource
from cloudguard.documents.findings import Cost, PriceTableInfo

POWER_UNKNOWN = "power state unknown: compute may bill, cost unknown; disks bill"


# What a kind of resource costs, whatever its age: (billable, note, hourly, price source).
Quote = tuple[bool | None, str, float | None, str]


@dataclass(frozen=True)
class PriceTable:
    info: PriceTableInfo
    hourly: dict[str, dict[str, float]]  # provider -> size (the cloud's price_key) -> per hour
    # Whose rules price a resource (billable states, price keys): the registry it was made for.
    clouds: Clouds = field(compare=False, repr=False)
    # provider -> PriceQuery.key -> a price list's answer (price_lists.PriceLists.resolve).
    listed: Mapping[str, Mapping[str, ListedPrice]] = field(default_factory=dict, repr=False)
    # provider -> PriceQuery.kind -> PriceQuery.sku (case-folded) -> per hour of one unit: the
    # bundled table's other kinds (a disk tier, a GiB of a volume, a public IP).
    kinds: Mapping[str, Mapping[str, Mapping[str, float]]] = field(default_factory=dict, repr=False)
    # (provider, kind, power state, size, region) -> Quote: a fleet has few distinct kinds
    # of VM, so each is worked out once, not once per VM.
    quotes: dict[tuple[str, str, str, str, str], Quote] = field(
        default_factory=dict, compare=False, repr=False
    )

    def price(self, provider: str, size: str) -> float | None:
        """The bundled table's hourly price of a VM size."""
        return self.hourly.get(provider, {}).get(self.clouds.cloud(provider).price_key(size))

    def with_listed(self, listed: Mapping[str, Mapping[str, ListedPrice]]) -> PriceTable:
        """This table with the price lists' answers first (and no quote worked out yet)."""
        return replace(self, listed=listed, quotes={})

    @property
    def fallback(self) -> str:
        return f"bundled table {self.info.as_of} (offline fallback)"

    def hourly_of(self, resource: Resource) -> tuple[float | None, str]:
        """(per hour, where the price came from): its cloud's list, else for a VM the
        bundled table; (None, "") when neither has it."""
        cloud = self.clouds.cloud(resource.provider)
        query = cloud.price_query(resource)
        if query is not None:
            found = self.listed.get(resource.provider, {}).get(query.key)
            if found is not None:
                return found.hourly * query.quantity, f"{found.source}, {found.fetched}"
        if resource.kind == VM and (hourly := self.price(resource.provider, resource.size)):
            return hourly, self.fallback
        if query is not None and resource.kind != VM:
            bundled = self.kinds.get(resource.provider, {}).get(query.kind, {})
            if (unit := bundled.get(query.sku.casefold())) is not None:
                return unit * query.quantity, self.fallback
        return None, ""


_INFO_KEYS = ("as_of", "currency", "basis")
# The other kinds' sections: each price per this many hours.
_KIND_SECTIONS = {"per_hour": 1.0, "per_month": HOURS_PER_MONTH}


def _kind_prices(document: Any) -> dict[str, dict[str, dict[str, float]]]:
    """`per_hour` and `per_month` (provider -> kind -> sku -> price), per hour."""
    found: dict[str, dict[str, dict[str, float]]] = {}
    for section, hours in _KIND_SECTIONS.items():
        for provider, by_kind in (document.get(section) or {}).items():
            if not isinstance(by_kind, dict):
                continue  # its "_what" note
            for kind, skus in by_kind.items():
                prices = found.setdefault(provider, {}).setdefault(kind, {})
                prices.update({str(sku).casefold(): float(p) / hours for sku, p in skus.items()})
    return found


def parse_price_table(document: Any, clouds: Clouds | None = None) -> PriceTable:
    """The table's own sections (one object per provider), then, for an installed cloud
    the table does not list, the prices its adapter ships."""
    clouds = clouds or installed_clouds()
    info = PriceTableInfo(*(str(document[key]) for key in _INFO_KEYS))
    hourly = {
        provider: {
            clouds.cloud(provider).price_key(str(size)): float(price)
            for size, price in sizes.items()
        }
        for provider, sizes in document.items()
        if provider not in _INFO_KEYS and provider not in _KIND_SECTIONS and isinstance(sizes, dict)
    }
    for cloud in clouds.available():
        if cloud.name not in hourly and cloud.hourly_prices:
            hourly[cloud.name] = {
                cloud.price_key(size): float(price) for size, price in cloud.hourly_prices.items()
            }
    return PriceTable(info=info, hourly=hourly, clouds=clouds, kinds=_kind_prices(document))


@cache
def _bundled_document() -> Any:
    text = resources.files("cloudguard.audit").joinpath("prices.json").read_text("utf-8")
    return json.loads(text)


def bundled_prices(clouds: Clouds | None = None) -> PriceTable:
    """The bundled table, priced for `clouds` (default: the installed ones)."""
    return parse_price_table(_bundled_document(), clouds)


def estimate(resource: Resource, prices: PriceTable, now: datetime) -> Cost:
    key = (resource.provider, resource.kind, resource.power_state, resource.size, resource.region)
    quote = prices.quotes.get(key)
    if quote is None:
        quote = prices.quotes[key] = _quote(resource, prices)
    billable, note, hourly, source = quote
    accrued = None
    if billable and hourly is not None and resource.created is not None:
        # Assumes it ran since created: an upper bound for a VM that was stopped in between.
        hours = max((now - resource.created).total_seconds(), 0.0) / 3600
        accrued = round(hourly * hours, 2)
    # Made in C (a NamedTuple's own `__new__` is a Python call): one per fleet resource.
    return tuple.__new__(Cost, (billable, note, hourly, accrued, prices.info.currency, source))


def _quote(resource: Resource, prices: PriceTable) -> Quote:
    cloud = prices.clouds.cloud(resource.provider)
    if cloud.adapter is None:
        return None, f"no adapter for provider {resource.provider!r}: billing unknown", None, ""
    if resource.kind != VM:
        return _kind_quote(resource, cloud.billing(resource.kind), prices)
    if resource.power_state == "unknown":
        # No power state (e.g. `az vm list` without -d): whether compute bills is
        # unknown, so the cost is unknown, never zero.
        return None, POWER_UNKNOWN, None, ""
    if resource.power_state not in cloud.billable_power_states:
        if resource.power_state == "terminated":
            return False, "terminated: nothing bills", 0.0, ""
        return False, f"{resource.power_state}: compute not billed; its disks still are", 0.0, ""
    note = cloud.power_notes.get(resource.power_state, f"{resource.power_state}: compute bills")
    hourly, source = prices.hourly_of(resource)
    if hourly is None:
        note += f"; price unknown for size {resource.size or '(none)'}"
    return True, note, hourly, source


def _kind_quote(resource: Resource, billing: Billing, prices: PriceTable) -> Quote:
    """Any kind but a VM: it bills while it exists, never by itself, or unknown."""
    if billing.idle is None:
        return None, billing.when, None, ""
    if not billing.idle:
        return False, billing.when, 0.0, ""
    hourly, source = prices.hourly_of(resource)
    detail = f" ({resource.size})" if resource.size else ""
    unpriced = "" if hourly is not None else "; no hourly price known"
    return True, f"{resource.kind}{detail}: {billing.when}{unpriced}", hourly, source

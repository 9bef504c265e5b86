"""Billable or not, and what it costs: a bundled, dated price table.

The table (`prices.json` beside this module) states its date, currency and
basis; every figure derived from it is an estimate and says so. A size not in
the table is "unknown", never zero.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any

from cloudguard.audit.findings import Cost, PriceTableInfo
from cloudguard.audit.model import Resource

# Compute bills while the machine is allocated. Azure keeps billing a VM that
# was shut down from inside the OS ("VM stopped") until it is deallocated; EC2
# bills only `running` (a stopped instance keeps its EBS volumes, which bill).
_BILLABLE_STATES = {
    "azure": frozenset({"running", "starting", "stopping", "stopped"}),
    "aws": frozenset({"running"}),
}

POWER_UNKNOWN = "power state unknown: compute may bill, cost unknown; disks bill"


# What a kind of resource costs, whatever its age: (billable, note, hourly).
Quote = tuple[bool | None, str, float | None]


@dataclass(frozen=True)
class PriceTable:
    info: PriceTableInfo
    hourly: dict[str, dict[str, float]]  # provider -> size (Azure: casefolded) -> per hour
    # (provider, kind, power state, size) -> Quote: a fleet has few distinct kinds of
    # VM, so each is worked out once, not once per VM.
    quotes: dict[tuple[str, str, str, str], Quote] = field(
        default_factory=dict, compare=False, repr=False
    )

    def price(self, provider: str, size: str) -> float | None:
        # ARM reports Azure sizes in whatever case they were requested in;
        # EC2 instance types are lower case by definition.
        key = size.casefold() if provider == "azure" else size
        return self.hourly.get(provider, {}).get(key)


def parse_price_table(document: Any) -> PriceTable:
    info = PriceTableInfo(
        as_of=str(document["as_of"]),
        currency=str(document["currency"]),
        basis=str(document["basis"]),
    )
    hourly = {
        provider: {
            (str(size).casefold() if provider == "azure" else str(size)): float(price)
            for size, price in document[provider].items()
        }
        for provider in ("azure", "aws")
    }
    return PriceTable(info=info, hourly=hourly)


@cache
def bundled_prices() -> PriceTable:
    text = resources.files("cloudguard.audit").joinpath("prices.json").read_text("utf-8")
    return parse_price_table(json.loads(text))


def estimate(resource: Resource, prices: PriceTable, now: datetime) -> Cost:
    key = (resource.provider, resource.kind, resource.power_state, resource.size)
    quote = prices.quotes.get(key)
    if quote is None:
        quote = prices.quotes[key] = _quote(resource, prices)
    billable, note, hourly = quote
    accrued = None
    if billable and hourly is not None and resource.created is not None:
        # Assumes it ran since created: an upper bound for a VM that was stopped in between.
        hours = max((now - resource.created).total_seconds(), 0.0) / 3600
        accrued = round(hourly * hours, 2)
    return Cost(billable, note, hourly, accrued, prices.info.currency)


def _quote(resource: Resource, prices: PriceTable) -> Quote:
    if resource.kind == "disk":
        # Adapters report only disks attached to nothing: they bill storage with no VM.
        size = resource.size or "size unknown"
        return True, f"unattached disk ({size}): storage bills; not priced here", None
    if resource.power_state == "unknown":
        # No power state (e.g. `az vm list` without -d): whether compute bills is
        # unknown, so the cost is unknown, never zero.
        return None, POWER_UNKNOWN, None
    billable = resource.power_state in _BILLABLE_STATES.get(resource.provider, frozenset())
    if not billable:
        if resource.power_state == "terminated":
            return False, "terminated: nothing bills", 0.0
        return False, f"{resource.power_state}: compute not billed; its disks still are", 0.0
    note = f"{resource.power_state}: compute bills"
    if resource.provider == "azure" and resource.power_state == "stopped":
        note = "stopped but still allocated: compute bills until deallocated"
    hourly = prices.price(resource.provider, resource.size)
    if hourly is None:
        note += f"; price unknown for size {resource.size or '(none)'}"
    return True, note, hourly

"""The retail price catalogue the fake serves: meters as the Azure Retail Prices API lists them.

Seeded with meters shaped like the API's documented sample items (Linux and
Windows, pay-as-you-go and Spot meters of one VM size, so a client must pick
the right one), and whatever a test adds. Nothing here knows HTTP.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.state import ArmState


@dataclass
class Meter:
    """One item of the API's `Items`: a meter's retail price in one region."""

    service_name: str  # Virtual Machines, Virtual Network, Azure Kubernetes Service
    arm_region_name: str  # westeurope
    location: str  # EU West
    product_name: str  # Virtual Machines Dasv6 Series (Windows)
    sku_name: str  # D4as v6 / D4as v6 Spot / Standard
    meter_name: str
    retail_price: float
    unit_of_measure: str = "1 Hour"
    arm_sku_name: str = ""
    price_type: str = (
        "Consumption"  # the item's `type`: Consumption, Reservation, DevTestConsumption
    )
    service_family: str = "Compute"
    is_primary_meter_region: bool = True
    meter_id: str = field(default_factory=lambda: str(uuid.uuid4()))


def catalogue() -> list[Meter]:
    """What a fresh fake serves (prices are samples, as the API's documentation says). Each
    VM size has its Spot, Low Priority, Windows and reservation meters listed before the
    Linux pay-as-you-go one: a client that does not choose takes a wrong price."""
    region, location = "westeurope", "EU West"
    meters: list[Meter] = []

    def vm(product: str, sku: str, price: float, arm_sku: str, kind: str = "Consumption") -> None:
        meters.append(
            Meter("Virtual Machines", region, location, product, sku, sku, price,
                  arm_sku_name=arm_sku, price_type=kind)
        )  # fmt: skip

    for arm_sku, sku, linux in (
        ("Standard_D4as_v6", "D4as v6", 0.2016),
        ("Standard_D2as_v5", "D2as v5", 0.096),
        ("Standard_B2s", "B2s", 0.0456),
    ):
        series = f"Virtual Machines {sku.split()[0].rstrip('0123456789')} Series"
        vm(series, f"{sku} Spot", round(linux * 0.2, 4), arm_sku)
        vm(series, f"{sku} Low Priority", round(linux * 0.2, 4), arm_sku)
        vm(f"{series} Windows", sku, round(linux * 1.9, 4), arm_sku)
        vm(series, sku, round(linux * 0.6, 4), arm_sku, kind="Reservation")
        vm(series, sku, linux, arm_sku)
    meters.append(
        Meter("Virtual Network", region, location, "IP Addresses", "Standard",
              "Standard IPv4 Static Public IP", 0.005, service_family="Networking")
    )  # fmt: skip
    meters.append(
        Meter("Azure Kubernetes Service", region, location, "Azure Kubernetes Service",
              "Standard", "Standard Uptime SLA", 0.10)
    )  # fmt: skip
    # A managed disk tier, per month, after a meter of the same SKU that is not the disk's
    # own (its bursting): a client must pick the tier's `... Disk` meter.
    for meter, price in (("P10 LRS Disk Bursting", 1.0), ("P10 LRS Disk", 21.68)):
        meters.append(
            Meter("Storage", region, location, "Premium SSD Managed Disks", "P10 LRS", meter,
                  price, unit_of_measure="1/Month", service_family="Storage")
        )  # fmt: skip
    return meters


def add_meter(state: ArmState, meter: Meter) -> Meter:
    with state.lock:
        state.retail_prices.append(meter)
        return meter

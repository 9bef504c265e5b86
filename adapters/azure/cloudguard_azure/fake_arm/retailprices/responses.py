"""The Azure Retail Prices API's JSON: `{"BillingCurrency", "CustomerEntityId",
"CustomerEntityType", "Items": [...], "NextPageLink", "Count"}`, items as its documented sample
response spells them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cloudguard_azure.fake_arm.wire import Json

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.retailprices.models import Meter


def item(meter: Meter) -> Json:
    return {
        "currencyCode": "USD",
        "tierMinimumUnits": 0.0,
        "retailPrice": meter.retail_price,
        "unitPrice": meter.retail_price,
        "armRegionName": meter.arm_region_name,
        "location": meter.location,
        "effectiveStartDate": "2025-04-01T00:00:00Z",
        "meterId": meter.meter_id,
        "meterName": meter.meter_name,
        "productId": "DZH318Z0BQ4L",
        "skuId": "DZH318Z0BQ4L/00K9",
        "availabilityId": None,
        "productName": meter.product_name,
        "skuName": meter.sku_name,
        "serviceName": meter.service_name,
        "serviceId": "DZH313Z7MMC8",
        "serviceFamily": meter.service_family,
        "unitOfMeasure": meter.unit_of_measure,
        "type": meter.price_type,
        "isPrimaryMeterRegion": meter.is_primary_meter_region,
        "armSkuName": meter.arm_sku_name,
    }


def page(items: list[Json], next_link: str | None) -> Json:
    return {
        "BillingCurrency": "USD",
        "CustomerEntityId": "Default",
        "CustomerEntityType": "Retail",
        "Items": items,
        "NextPageLink": next_link,
        "Count": len(items),
    }

"""`GET /api/retail/prices?$filter=...`: the public Azure Retail Prices API, no token needed.

Filters are OData as the API takes them: `field eq 'value'` clauses joined by
`and`, on the documented fields (armSkuName, armRegionName, priceType,
serviceName, ...); values compare case-sensitively, as from API version
2023-01-01-preview on. Pages hold `page_size` items (the API's is 1,000) and
link the next with `NextPageLink`, which carries `$skip`. A filter the fake
cannot read is ARM's 400, never an unfiltered answer.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

from cloudguard_azure.fake_arm.retailprices import responses
from cloudguard_azure.fake_arm.retailprices.models import Meter
from cloudguard_azure.fake_arm.routing import (
    Context,
    Request,
    Response,
    arm_error,
    json_response,
    route,
)

PAGE_SIZE = 100
_CLAUSE = re.compile(r"^\s*(?P<field>[A-Za-z]+)\s+eq\s+'(?P<value>[^']*)'\s*$")
_FIELDS = {
    "armskuname": "arm_sku_name",
    "armregionname": "arm_region_name",
    "location": "location",
    "metername": "meter_name",
    "metrid": "meter_id",
    "productname": "product_name",
    "skuname": "sku_name",
    "servicename": "service_name",
    "servicefamily": "service_family",
    "pricetype": "price_type",
}


def _parse(text: str) -> list[tuple[str, str]] | None:
    clauses = []
    for part in re.split(r"\s+and\s+", text.strip()) if text.strip() else []:
        found = _CLAUSE.match(part)
        if found is None or found["field"].casefold() not in _FIELDS:
            return None
        clauses.append((_FIELDS[found["field"].casefold()], found["value"]))
    return clauses


def _matches(meter: Meter, clauses: list[tuple[str, str]]) -> bool:
    return all(str(getattr(meter, name)) == value for name, value in clauses)


@route("GET", "retail_prices", r"/api/retail/prices", anonymous=True)
def retail_prices(ctx: Context, req: Request) -> Response:
    clauses = _parse(req.query.get("$filter", ""))
    if clauses is None:
        return arm_error(400, "InvalidFilter", f"Invalid $filter: {req.query.get('$filter')!r}")
    found = [m for m in ctx.state.retail_prices if _matches(m, clauses)]
    start = int(req.query.get("$skip", "0") or 0)
    chunk = found[start : start + PAGE_SIZE]
    next_link = None
    if start + PAGE_SIZE < len(found):
        query = {k: v for k, v in req.query.items() if k != "$skip"}
        query["$skip"] = str(start + PAGE_SIZE)
        next_link = f"{req.base_url}{req.path}?{urlencode(query)}"
    return json_response(200, responses.page([responses.item(m) for m in chunk], next_link))

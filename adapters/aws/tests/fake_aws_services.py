"""AWS services moto does not implement, faked on 127.0.0.1 in their documented wire shapes.

- the Price List Query API (`pricing`, JSON 1.1): `GetProducts` with `TERM_MATCH`
  filters on a product's attributes, answering `PriceList` items (JSON documents
  as strings: `product`, `terms.OnDemand...priceDimensions...pricePerUnit`),
  paged by `NextToken`;
- AWS Resource Explorer (`resource-explorer-2`, REST-JSON): `ListIndexes` and
  `Search`, whose `Count` says whether the search is `Complete` (it counts at
  most 1,000 resources, as the service does).

The real boto3 clients talk to it with `endpoint_url`; the request counter is what
tests read. Signatures are not checked (moto's keys sign them).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from loopback_server import serving

SEARCH_COUNT_LIMIT = 1000  # Resource Explorer counts no further


def ec2_product(instance_type: str, region: str, price: str, **attributes: str) -> dict[str, Any]:
    """A Price List item of an EC2 instance type, as GetProducts returns it (aws_v1)."""
    sku = "-".join(("SKU", instance_type, region, *attributes.values()))
    attrs = {
        "servicecode": "AmazonEC2", "instanceType": instance_type, "regionCode": region,
        "operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA",
        "capacitystatus": "Used", "usagetype": f"BoxUsage:{instance_type}",
        **attributes,
    }  # fmt: skip
    return _product(sku, "Compute Instance", attrs, "Hrs", price)


def ebs_product(volume_type: str, region: str, price: str) -> dict[str, Any]:
    attrs = {"servicecode": "AmazonEC2", "volumeApiName": volume_type, "regionCode": region,
             "usagetype": f"EBS:VolumeUsage.{volume_type}"}  # fmt: skip
    return _product(f"EBS{volume_type}{region}", "Storage", attrs, "GB-Mo", price)


def _product(sku: str, family: str, attrs: dict[str, str], unit: str, price: str) -> dict[str, Any]:
    term = f"{sku}.JRTCKXETXF"
    return {
        "product": {"productFamily": family, "attributes": attrs, "sku": sku},
        "serviceCode": "AmazonEC2",
        "terms": {
            "OnDemand": {
                term: {
                    "priceDimensions": {
                        f"{term}.6YS6EN2CT7": {
                            "unit": unit,
                            "endRange": "Inf",
                            "description": f"${price} per {unit}",
                            "appliesTo": [],
                            "rateCode": f"{term}.6YS6EN2CT7",
                            "beginRange": "0",
                            "pricePerUnit": {"USD": price},
                        }
                    },
                    "sku": sku,
                    "effectiveDate": "2025-06-01T00:00:00Z",
                    "offerTermCode": "JRTCKXETXF",
                    "termAttributes": {},
                }
            }
        },
        "version": "20250601000000",
        "publicationDate": "2025-06-01T00:00:00Z",
    }


@dataclass
class FakeAwsServices:
    products: list[dict[str, Any]] = field(default_factory=list)
    indexes: list[dict[str, str]] = field(default_factory=list)
    resources: list[dict[str, Any]] = field(default_factory=list)
    page_size: int = 100
    requests: Counter[str] = field(default_factory=Counter)
    endpoint: str = ""

    def index(self, region: str, account: str = "123456789012") -> None:
        """An aggregator index in `region`: Resource Explorer is set up."""
        arn = f"arn:aws:resource-explorer-2:{region}:{account}:index/0f5a1b2c"
        self.indexes.append({"Arn": arn, "Region": region, "Type": "AGGREGATOR"})

    def indexed(
        self, arn: str, region: str, tags: dict[str, str], account: str = "123456789012"
    ) -> None:
        service, rest = arn.split(":")[2], arn.split(":", 5)[5]
        kind = rest.split("/", 1)[0] if "/" in rest else rest.split(":", 1)[0]
        self.resources.append({
            "Arn": arn, "LastReportedAt": "2026-01-05T09:00:00Z", "OwningAccountId": account,
            "Region": region, "ResourceType": f"{service}:{kind}", "Service": service,
            "Properties": [{"Name": "tags", "LastReportedAt": "2026-01-05T09:00:00Z",
                            "Data": [{"Key": k, "Value": v} for k, v in tags.items()]}],
        })  # fmt: skip

    # -- answers ------------------------------------------------------------------

    def answer(self, path: str, target: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if target == "AWSPriceListService.GetProducts":
            self.requests["GetProducts"] += 1
            return 200, self._products(body)
        if path == "/ListIndexes":
            self.requests["ListIndexes"] += 1
            wanted = body.get("Type")
            return 200, {"Indexes": [i for i in self.indexes if not wanted or i["Type"] == wanted]}
        if path == "/Search":
            self.requests["Search"] += 1
            return 200, self._search(body)
        return 400, {"__type": "UnknownOperationException", "message": f"{path} {target}"}

    def _products(self, body: dict[str, Any]) -> dict[str, Any]:
        def matches(item: dict[str, Any]) -> bool:
            # A filter names an attribute, or the product's family (`productFamily`).
            product = item["product"]
            fields = {**product["attributes"], "productFamily": product["productFamily"]}
            return item["serviceCode"] == body["ServiceCode"] and all(
                f["Type"] == "TERM_MATCH" and fields.get(f["Field"]) == f["Value"]
                for f in body.get("Filters", [])
            )

        found = [json.dumps(item) for item in self.products if matches(item)]
        start = int(body.get("NextToken") or 0)
        size = min(int(body.get("MaxResults") or 100), self.page_size)
        answer: dict[str, Any] = {
            "FormatVersion": "aws_v1",
            "PriceList": found[start : start + size],
        }
        if start + size < len(found):
            answer["NextToken"] = str(start + size)
        return answer

    def _search(self, body: dict[str, Any]) -> dict[str, Any]:
        start = int(body.get("NextToken") or 0)
        size = min(int(body.get("MaxResults") or 1000), self.page_size)
        total = len(self.resources)
        answer: dict[str, Any] = {
            "Count": {"Complete": total <= SEARCH_COUNT_LIMIT,
                      "TotalResources": min(total, SEARCH_COUNT_LIMIT)},
            "Resources": self.resources[start : start + size],
            "ViewArn": "arn:aws:resource-explorer-2:us-east-1:123456789012:view/default/1",
        }  # fmt: skip
        if start + size < total:
            answer["NextToken"] = str(start + size)
        return answer


@contextmanager
def serve() -> Iterator[FakeAwsServices]:
    services = FakeAwsServices()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = (
            True  # headers and body are two writes: no 40 ms delayed-ACK stall
        )

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            target = self.headers.get("X-Amz-Target", "")
            status, answer = services.answer(self.path.split("?")[0], target, body)
            data = json.dumps(answer).encode()
            self.send_response(status)
            kind = "application/x-amz-json-1.1" if target else "application/json"
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serving(Handler) as services.endpoint:
        yield services

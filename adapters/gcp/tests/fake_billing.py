"""The Cloud Billing Catalog API, faked over HTTPS on 127.0.0.1, in its documented shapes.

`GET /v1/services/{service}/skus?pageSize=&pageToken=&currencyCode=` answers
`{"skus": [...], "nextPageToken": "..."}` (an empty token on the last page), each
SKU as the API spells it: `name`, `skuId`, `description`, `category`
(`serviceDisplayName`, `resourceFamily`, `resourceGroup`, `usageType`),
`serviceRegions`, `pricingInfo[].pricingExpression` (`usageUnit`, `displayQuantity`,
`tieredRates[].unitPrice {currencyCode, units, nanos}` with `units` an int64 as a
JSON string, `baseUnit`, `baseUnitConversionFactor`), `serviceProviderName`,
`geoTaxonomy`. An unknown service is a 404 in Google's error shape.

The real `google-cloud-billing` client (REST transport) talks to it; a throwaway
`trustme` CA signs its certificate. The fake pages at most `page_size` SKUs whatever
the client asks (the real API pages at 5000), records every request and whether it
carried an Authorization header, and can answer a status `fail_times` times.
"""

from __future__ import annotations

import hashlib
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import trustme

COMPUTE_ENGINE = "6F81-5844-456A"
_STATUS = {404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}
_REGIONS = {
    "Americas": ["us-central1", "us-east1", "us-west1"],
    "EMEA": ["europe-west1", "europe-west4"],
}


def sku(
    description: str,
    price: float,
    *,
    place: str = "Americas",
    unit: str = "h",
    usage_type: str = "OnDemand",
    family: str = "Compute",
    group: str = "CPU",
    regions: list[str] | None = None,
) -> dict[str, Any]:
    """One SKU of Compute Engine as `services.skus.list` returns it."""
    sku_id = hashlib.sha256(f"{description}|{usage_type}".encode()).hexdigest()[:12].upper()
    sku_id = f"{sku_id[:4]}-{sku_id[4:8]}-{sku_id[8:]}"
    units = int(price)
    base = {"h": ("s", "second", 3600), "GiBy.h": ("By.s", "byte second", 3865470566400),
            "GiBy.mo": ("By.s", "byte second", 2822230204416000)}[unit]  # fmt: skip
    served = regions if regions is not None else _REGIONS[place]
    described = {"h": "hour", "GiBy.h": "gibibyte hour", "GiBy.mo": "gibibyte month"}[unit]
    return {
        "name": f"services/{COMPUTE_ENGINE}/skus/{sku_id}",
        "skuId": sku_id,
        "description": description,
        "category": {
            "serviceDisplayName": "Compute Engine",
            "resourceFamily": family,
            "resourceGroup": group,
            "usageType": usage_type,
        },
        "serviceRegions": served,
        "pricingInfo": [
            {
                "summary": "",
                "pricingExpression": {
                    "usageUnit": unit,
                    "usageUnitDescription": described,
                    "baseUnit": base[0],
                    "baseUnitDescription": base[1],
                    "baseUnitConversionFactor": base[2],
                    "displayQuantity": 1,
                    "tieredRates": [
                        {
                            "startUsageAmount": 0,
                            "unitPrice": {
                                "currencyCode": "USD",
                                "units": str(units),
                                "nanos": round((price - units) * 1e9),
                            },
                        }
                    ],
                },
                "currencyConversionRate": 1,
                "effectiveTime": "2026-11-30T08:00:00.000Z",
            }
        ],
        "serviceProviderName": "Google",
        "geoTaxonomy": {"type": "MULTI_REGIONAL", "regions": served},
    }


@dataclass
class Request:
    path: str
    query: dict[str, str]
    authorized: bool  # it carried an Authorization header (a token)


@dataclass
class FakeBilling:
    skus: list[dict[str, Any]] = field(default_factory=list)
    page_size: int = 5000
    requests: list[Request] = field(default_factory=list)
    fail_status: int = 0
    fail_times: int = 0
    url: str = ""
    ca_bundle: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, path: str, query: dict[str, str], authorized: bool) -> tuple[int, Any]:
        with self.lock:
            self.requests.append(Request(path, query, authorized))
            if self.fail_times:
                self.fail_times -= 1
                return _error(self.fail_status, "injected by the fake")
        parts = path.strip("/").split("/")
        if len(parts) != 4 or parts[:1] != ["v1"] or parts[1] != "services" or parts[3] != "skus":
            return _error(404, f"no route for {path}")
        if parts[2] != COMPUTE_ENGINE:
            return _error(404, f"Service services/{parts[2]} not found.")
        start = int(query.get("pageToken") or 0)
        size = min(int(query.get("pageSize") or 5000), self.page_size)
        page = self.skus[start : start + size]
        following = start + size if start + size < len(self.skus) else None
        return 200, {"skus": page, "nextPageToken": str(following) if following else ""}


def _error(status: int, message: str) -> tuple[int, Any]:
    return status, {"error": {"code": status, "message": message,
                              "status": _STATUS.get(status, "INTERNAL")}}  # fmt: skip


@contextmanager
def serve(directory: Path) -> Iterator[FakeBilling]:
    """The fake on a free loopback port over TLS; its CA's PEM written into `directory`."""
    fake = FakeBilling()
    authority = trustme.CA()
    certificate = authority.issue_cert("127.0.0.1", "localhost")
    fake.ca_bundle = str(directory / "billing-ca.pem")
    authority.cert_pem.write_to_path(fake.ca_bundle)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    certificate.configure_cert(context)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two writes: no ACK stall

        def do_GET(self) -> None:
            split = urlsplit(self.path)
            query = {key: values[-1] for key, values in parse_qs(split.query).items()}
            authorized = bool(self.headers.get("Authorization"))
            status, answer = fake.answer(split.path, query, authorized)
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    fake.url = f"https://127.0.0.1:{server.server_address[1]}"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

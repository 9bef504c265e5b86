"""The Cloud Billing Catalog API, faked over HTTPS on 127.0.0.1, in its documented shapes.

`GET /v1/services/{service}/skus?pageSize=&pageToken=&currencyCode=` answers
`{"skus": [...], "nextPageToken": "..."}` (an empty token on the last page), each
SKU as the API spells it: `name`, `skuId`, `description`, `category`
(`serviceDisplayName`, `resourceFamily`, `resourceGroup`, `usageType`),
`serviceRegions`, `pricingInfo[].pricingExpression` (`usageUnit`, `displayQuantity`,
`tieredRates[].unitPrice {currencyCode, units, nanos}` with `units` an int64 as a
JSON string, `baseUnit`, `baseUnitConversionFactor`), `serviceProviderName`,
`geoTaxonomy`. An unknown service is a 404 in Google's error shape. A SKU with a free
allowance lists it as a first tier priced 0 and its price from `free` on (Static Ip
Charge's first hour, a standard VM's address's first 744 h, as the catalog lists them).

The real `google-cloud-billing` client (REST transport) talks to it; a throwaway
`trustme` CA signs its certificate. The fake pages at most `page_size` SKUs whatever
the client asks (the real API pages at 5000), records every request and whether it
carried an Authorization header, and can answer a status `fail_times` times (saying
`Retry-After: retry_after` with it, if given).
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
# How the catalog names a multi-region in `serviceRegions` (a snapshot's `eu` is `europe`).
MULTI_REGIONS = ("us", "europe", "asia")


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
    free: float = 0,
) -> dict[str, Any]:
    """One SKU of Compute Engine as `services.skus.list` returns it; `free` > 0: its first
    `free` units at 0, the price from there on."""
    sku_id = hashlib.sha256(f"{description}|{usage_type}".encode()).hexdigest()[:12].upper()
    sku_id = f"{sku_id[:4]}-{sku_id[4:8]}-{sku_id[8:]}"
    base = {"h": ("s", "second", 3600), "GiBy.h": ("By.s", "byte second", 3865470566400),
            "GiBy.mo": ("By.s", "byte second", 2822230204416000)}[unit]  # fmt: skip
    served = regions if regions is not None else _REGIONS[place]
    tiers = [(0.0, 0.0), (free, price)] if free else [(0.0, price)]
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
                            "startUsageAmount": start,
                            "unitPrice": {
                                "currencyCode": "USD",
                                "units": str(int(rate)),
                                "nanos": round((rate - int(rate)) * 1e9),
                            },
                        }
                        for start, rate in tiers
                    ],
                },
                "currencyConversionRate": 1,
                "effectiveTime": "2026-11-30T08:00:00.000Z",
            }
        ],
        "serviceProviderName": "Google",
        "geoTaxonomy": _geo_taxonomy(served),
    }


def _geo_taxonomy(served: list[str]) -> dict[str, Any]:
    """GLOBAL with no regions (a global SKU), REGIONAL with its one, MULTI_REGIONAL else."""
    if served == ["global"]:
        return {"type": "GLOBAL"}
    if len(served) == 1 and served[0] not in MULTI_REGIONS:
        return {"type": "REGIONAL", "regions": served}
    return {"type": "MULTI_REGIONAL", "regions": served}


def address_skus() -> list[dict[str, Any]]:
    """Compute Engine's external IPv4 SKUs (family Network, group IpAddress, per hour): a
    reserved address used by nothing in the Americas and in Frankfurt, one in use on a
    standard VM and on a Spot VM (both global), each with its free first tier."""
    network = {"family": "Network", "group": "IpAddress"}
    return [
        sku("Static Ip Charge", 0.01, free=1, **network),
        sku("Static Ip Charge in Frankfurt", 0.013, regions=["europe-west3"], free=1, **network),
        sku("External IP Charge on a Spot Preemptible VM", 0.0025, regions=["global"],
            **network),
        sku("External IP Charge on a Standard VM", 0.005, regions=["global"], free=744,
            **network),
    ]  # fmt: skip


def snapshot_skus() -> list[dict[str, Any]]:
    """Compute Engine's snapshot storage SKUs (family Storage, group PDSnapshot, per
    GiB-month): standard in the Americas' regions (5 GiB free), in Paris and in the US and
    EU multi-regions; archive in the Americas' regions and in Paris; an early deletion
    charge, which is no storage rate."""
    snapshot = {"unit": "GiBy.mo", "family": "Storage", "group": "PDSnapshot"}
    return [
        sku("Storage PD Snapshot Early Deletion", 0.05, **snapshot),
        sku("Storage PD Snapshot", 0.05, free=5, **snapshot),
        sku("Storage PD Snapshot in Paris", 0.058, regions=["europe-west9"], **snapshot),
        sku("Storage PD Snapshot in US", 0.065, regions=["us"], **snapshot),
        sku("Storage PD Snapshot in Europe", 0.065, regions=["europe"], **snapshot),
        sku("Regional Archive Snapshot Data Storage", 0.019, **snapshot),
        sku("Regional Archive Snapshot Data Storage in Paris", 0.022, regions=["europe-west9"],
            **snapshot),
    ]  # fmt: skip


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
    retry_after: str | None = None  # said with each failure, if given
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
            if status >= 400 and fake.retry_after is not None:
                self.send_header("Retry-After", fake.retry_after)
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

"""Google Cloud's prices from its own list: the Cloud Billing Catalog API.

`services.skus.list` of Compute Engine (`services/6F81-5844-456A`) in USD, every
page (`pageToken`, until `nextPageToken` is empty), through `google-cloud-billing`'s
`CloudCatalogClient` (REST transport). The catalog cannot be filtered, so it is read
once per audit, and that one listing answers every price the audit asks of it (its
distinct machine types and regions). A SKU prices only on demand (`category.usageType`
`OnDemand`: never Spot or preemptible, never a commitment), in the resource's region
(one of the SKU's `serviceRegions`), at its latest `pricingInfo`'s first paid tier
(`unitPrice`: `units` + `nanos` / 1e9 per `usageUnit`; a tier priced 0 is a free
allowance the whole billing account shares, not what one more resource costs; a SKU
with no paid tier prices nothing):

- a VM: its machine type's vCPUs x its series' vCPU-hour SKU (`h`) + its memory GiB x
  the series' GiB-hour SKU (`GiBy.h`): `N2 Instance Core running in Americas` and
  `N2 Instance Ram running in Americas` for N2 (`N2 Custom Instance ...` for a custom
  N2, and so on; the shape: cloudguard_gcp.machine_types). A sole-tenant or
  preemptible SKU never matches: the description is matched from its start;
- a persistent disk spelled `pd-standard|pd-balanced|pd-ssd <N> GiB`: its zonal
  capacity SKU (`Storage PD Capacity`, `Balanced PD Capacity`, `SSD backed PD
  Capacity`, or the same `in <place>`; `GiBy.mo`), per hour that / 730 x N; a
  regional disk (`regions/R/disks/D`) its regional SKU (`Regional Balanced PD
  Capacity`, ...), never the zonal one. The gcloud exports name no disk size: such
  a disk is unknown;
- a reserved address as the live sweep spells it (`external, reserved, used by
  nothing`, `external, in use, used by vm-1`; cloudguard_gcp.compute_state). Google
  bills an external IPv4 address by the hour: reserved and used by nothing at the
  regional `Static Ip Charge` (or `Static Ip Charge in <place>`; resource family
  `Network`, group `IpAddress`, `h`: "Static external IP address (assigned but
  unused)"), in use on a standard VM at `External IP Charge on a Standard VM`, whose
  `serviceRegions` is `global` (on a Spot VM at `External IP Charge on a Spot
  Preemptible VM`, less). Both list a free first tier (Static Ip Charge's first hour,
  the standard VM's first 744 h), then $0.010 and $0.005 an hour (the Americas).
  Sources: Cyclenerd/google-cloud-pricing-cost-calculator, build/mapping.csv (the
  three SKU descriptions, their family and group, as this API lists them); infracost,
  internal/resources/google/compute_address.go (the same three SKUs, the standard
  VM's priced from usage 744 on, internal addresses not priced at all). An address in
  use is priced as if its user were a standard VM: the sweep names its users, not
  their kind, so a Spot VM's address is overstated ($0.0025 an hour) and a global
  address in use (a global forwarding rule's, never a VM's) is unknown. An internal
  address is unknown: no Google page or SKU found says it is free. An address the
  sweep saw reserving, or an export's (its row says neither external nor in use), is
  unknown, never zero;
- a snapshot spelled `standard|archive <GiB> GiB stored`, in its first storage location:
  per GiB-month / 730 x its GiB. Standard: `Storage PD Snapshot` (or `... in <place>`;
  resource group `PDSnapshot`, `GiBy.mo`), one SKU a location whether a region or a
  multi-region, told apart by `serviceRegions`, which names a multi-region `us`,
  `europe` or `asia` (a snapshot's `storageLocations` says `us`, `eu`, `asia`: `eu` is
  looked up as `europe`; source: Cyclenerd's build/skus.go, which renames exactly those
  three serviceRegions to its own multi-region names, and build/pricing.pl, which finds
  one `Storage PD Snapshot%` SKU per region and per multi-region). Archive, in a region:
  `Regional Archive Snapshot Data Storage` (or `... in <place>`). An archive snapshot in
  a multi-region is unknown: no description of such a SKU was found, and a guess would
  price it wrong;
- nothing else: a bucket, a cluster are unknown, never zero.

Retries: each page on cloudguard_gcp.clients' one retry (the sweep's and the reaper's):
`--retries` retries of throttling, 5xx and broken connections with jittered backoff, and
an answer's Retry-After waited for (capped at clients.BACKOFF_MAX).

Where it is read: `--billing-catalog-endpoint URL` (the adapter's option), else
cloudbilling.googleapis.com, but never when `--management-endpoint` names another
endpoint and no catalog endpoint was given (a test's fake does not send its questions
to Google on its own). Who asks is the kernel's one rule (cloudguard.cloud.endpoints):
a real credential, Application Default Credentials with the read-only billing scope,
goes only to cloudbilling.googleapis.com over HTTPS; `--credential fake-gcp`, anonymous
credentials that carry no token at all, only to a loopback endpoint; anything else is
refused with nothing sent. The Google libraries are imported only when a price is asked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cloudguard.cloud import kinds
from cloudguard.cloud.endpoints import (
    CloudEndpoints,
    EndpointRefused,
    credential_for,
)
from cloudguard.cloud.options import LIVE_PANEL, NeedsTrust, declare, string
from cloudguard.cloud.pricing import HOURS_PER_MONTH, ListedPrice, PriceListError, PriceQuery
from cloudguard.cloud.records import Resource, SweepRequest
from cloudguard_gcp import clients, credentials
from cloudguard_gcp.machine_types import Shape, shape_of
from cloudguard_gcp.options import GCP_KEY_FILE

SOURCE = "Cloud Billing Catalog API"
PUBLIC_ENDPOINT = "https://cloudbilling.googleapis.com"
COMPUTE_ENGINE = "services/6F81-5844-456A"  # the Compute Engine service's id in the catalog
SCOPE = "https://www.googleapis.com/auth/cloud-billing.readonly"
CURRENCY = "USD"  # the bundled table's: the catalog converts when asked
PAGE_SIZE = 5000  # the API's largest page
MAX_PAGES = 100  # Compute Engine lists some tens of thousands of SKUs: more is no end

BILLING_CATALOG_ENDPOINT = declare(
    "billing_catalog_endpoint",
    parse=string,
    default=None,
    metavar="URL",
    help="Google Cloud: the Cloud Billing Catalog API's endpoint (not used when "
    "--management-endpoint is given and this is not).",
    panel=LIVE_PANEL,
    trust=NeedsTrust("chooses where your credentials are sent"),
)

# Where a real Google credential may go to read prices: the catalog's own host alone.
ENDPOINTS = CloudEndpoints(
    cloud="Google Cloud",
    fake_credential=credentials.FAKE,  # the live sweep's fake: one name for both
    hosts=re.compile(r"cloudbilling\.googleapis\.com"),
    described="cloudbilling.googleapis.com",
)
REAL_CREDENTIAL = "default"  # Application Default Credentials: the only real one taken

# A series -> the SKU description stems of its predefined and its custom types (None: it
# has no custom types). A vCPU's SKU is "<stem> Core running in <place>", a GiB's
# "<stem> Ram running in <place>".
_SERIES: dict[str, tuple[str, str | None]] = {
    "n1": ("N1 Predefined Instance", "Custom Instance"),
    "n2": ("N2 Instance", "N2 Custom Instance"),
    "n2d": ("N2D AMD Instance", "N2D AMD Custom Instance"),
    "e2": ("E2 Instance", "E2 Custom Instance"),
    "c2": ("Compute optimized", None),
    "c2d": ("C2D AMD Instance", None),
    "t2d": ("T2D AMD Instance", None),
}
# A persistent disk type -> its zonal capacity SKU's description ("... in <place>" too).
_DISKS: dict[str, str] = {
    "pd-standard": "Storage PD Capacity",
    "pd-balanced": "Balanced PD Capacity",
    "pd-ssd": "SSD backed PD Capacity",
    # A regional disk (replicated in two zones) bills its own, higher, rate.
    "regional-pd-standard": "Regional Storage PD Capacity",
    "regional-pd-balanced": "Regional Balanced PD Capacity",
    "regional-pd-ssd": "Regional SSD backed PD Capacity",
}
# The live sweep's disk size: `pd-balanced 100 GiB, attached to nothing` (compute_state).
_DISK = re.compile(r"^(?P<type>\S+) (?P<size>\d+) GiB(?:,|$)")
# The live sweep's address size: `external, reserved, used by nothing` (compute_state); an
# export's address says nothing (an empty size) and is never priced.
_ADDRESS = re.compile(r"^(?P<where>external|internal), (?P<state>reserved|in use), used by ")
# An external address -> its SKU's description and where the catalog serves it (None: the
# address's own region). Reserved and used by nothing: the regional `Static Ip Charge`. In
# use: the global `External IP Charge on a Standard VM` (the user taken for a standard VM).
RESERVED, IN_USE = "external-reserved", "external-in-use"
_ADDRESSES: dict[str, tuple[str, str | None]] = {
    RESERVED: ("Static Ip Charge", None),
    IN_USE: ("External IP Charge on a Standard VM", "global"),
}
# The live sweep's snapshot size (snapshots.list): `standard 12.5 GiB stored`, its
# storageBytes / 2**30 to two decimals at most, never an exponent.
_SNAPSHOT = re.compile(r"^(?P<type>standard|archive) (?P<size>\d+(?:\.\d+)?) GiB stored$")
# A snapshot's storage class -> its storage SKU's description ("... in <place>" too), for a
# region and for a multi-region (None: no SKU known: unknown, never a guess).
_SNAPSHOTS: dict[str, tuple[str, str | None]] = {
    "standard": ("Storage PD Snapshot", "Storage PD Snapshot"),
    "archive": ("Regional Archive Snapshot Data Storage", None),
}
# A snapshot's multi-region storage location (as `storageLocations` names it) -> the name
# the catalog's `serviceRegions` gives it.
_MULTI_REGIONS = {"us": "us", "eu": "europe", "asia": "asia"}
VCPU_HOUR, GIB_HOUR, GIB_MONTH, HOUR = "h", "GiBy.h", "GiBy.mo", "h"


def price_query(resource: Resource) -> PriceQuery | None:
    if resource.kind == kinds.VM and resource.size:
        return PriceQuery(kinds.VM, resource.size.casefold(), resource.region)
    disk = _DISK.match(resource.size) if resource.kind == kinds.DISK else None
    if disk is not None and disk["type"] in _DISKS:
        regional = "/regions/" in resource.id  # never priced at the zonal rate
        sku = f"regional-{disk['type']}" if regional else disk["type"]
        return PriceQuery(kinds.DISK, sku, resource.region, float(disk["size"]))
    address = _ADDRESS.match(resource.size) if resource.kind == kinds.PUBLIC_IP else None
    if address is not None and address["where"] == "external":
        sku = RESERVED if address["state"] == "reserved" else IN_USE
        return PriceQuery(kinds.PUBLIC_IP, sku, resource.region)
    snapshot = _SNAPSHOT.match(resource.size) if resource.kind == kinds.SNAPSHOT else None
    if snapshot is not None:
        return PriceQuery(kinds.SNAPSHOT, snapshot["type"], resource.region,
                          float(snapshot["size"]))  # fmt: skip
    return None  # an internal address, an export's row, any other kind: unknown


def price_list(request: SweepRequest) -> BillingCatalog | None:
    endpoint = BILLING_CATALOG_ENDPOINT.value_in(request.settings)
    if endpoint is None and request.endpoint:
        return None  # a fake (or another) management endpoint: not Google's catalog
    # An endpoint given is trusted as the management endpoint is (its CA bundle).
    ca_bundle = request.ca_bundle if endpoint is not None else None
    key_file = GCP_KEY_FILE.value_in(request.settings)  # the sweep's identity prices too
    return BillingCatalog(endpoint, request.credential, ca_bundle, request.retries, key_file)


@dataclass(frozen=True)
class Rate:
    """One on-demand SKU the catalog answered: what it is, where, per what, how much."""

    description: str
    unit: str
    regions: frozenset[str]
    price: float
    currency: str


@dataclass
class BillingCatalog:
    """The Billing Catalog at `endpoint` (None: Google's own), a
    `cloudguard.cloud.pricing.PriceList`."""

    endpoint: str | None
    credential: str | None
    ca_bundle: str | None
    retries: int
    key_file: str | None = None  # --gcp-key-file: a service account instead of ADC
    source: str = SOURCE

    def prices(self, queries: Sequence[PriceQuery]) -> Mapping[str, ListedPrice | None]:
        from google.api_core.exceptions import GoogleAPIError
        from google.auth.exceptions import GoogleAuthError
        from requests.exceptions import RequestException

        fetched = datetime.now(UTC).date().isoformat()
        try:
            rates = list(self._rates())
        except EndpointRefused as exc:
            raise PriceListError(f"nothing sent: {exc}") from exc
        except (GoogleAPIError, GoogleAuthError, RequestException, OSError, ValueError) as exc:
            raise PriceListError(f"{self.endpoint or PUBLIC_ENDPOINT}: {exc}") from exc
        return {query.key: _price(query, rates, fetched) for query in queries}

    def _rates(self) -> Iterator[Rate]:
        """Every on-demand compute and storage SKU of Compute Engine, every page read."""
        from google.api_core.client_options import ClientOptions
        from google.cloud.billing_v1 import CloudCatalogClient, ListSkusRequest

        client = CloudCatalogClient(
            credentials=self._credentials(),
            transport="rest",
            client_options=ClientOptions(api_endpoint=self.endpoint or PUBLIC_ENDPOINT),
        )
        clients.configure_session(client, self.endpoint, self.ca_bundle)
        request = ListSkusRequest(parent=COMPUTE_ENGINE, currency_code=CURRENCY,
                                  page_size=PAGE_SIZE)  # fmt: skip
        # Each page on the sweep's retry (`--retries`, Retry-After obeyed): the pager asks
        # every page with it. A callable wrapping the call, as GAPIC applies a `retry`; the
        # stubs name only google-api-core's Retry.
        retrying: Any = clients.retry_spending(self.retries)
        pager = client.list_skus(request=request, retry=retrying, timeout=clients.TIMEOUT)
        for number, page in enumerate(pager.pages, start=1):
            if number > MAX_PAGES:
                raise ValueError(f"the catalog did not end after {MAX_PAGES} pages")
            for sku in page.skus:
                rate = _rate(sku)
                if rate is not None:
                    yield rate

    def _credentials(self) -> Any:
        """Anonymous for a fake on loopback; Application Default Credentials for Google's
        catalog; EndpointRefused for any other pairing (nothing is sent)."""
        if credential_for(ENDPOINTS, self.endpoint, self.credential):
            from google.auth.credentials import AnonymousCredentials

            return AnonymousCredentials()
        name = (self.credential or REAL_CREDENTIAL).strip().lower()
        if name != REAL_CREDENTIAL:
            raise EndpointRefused(
                f"credential {self.credential!r} is not one Google Cloud's prices are read "
                f"with: --credential {REAL_CREDENTIAL} (Application Default Credentials) "
                f"or, for a fake on loopback, --credential {ENDPOINTS.fake_credential}"
            )
        if self.key_file:
            from google.oauth2 import service_account

            return service_account.Credentials.from_service_account_file(
                self.key_file, scopes=[SCOPE]
            )
        import google.auth

        found, _ = google.auth.default(scopes=[SCOPE])
        return found


def _rate(sku: Any) -> Rate | None:
    """An on-demand compute, storage or network SKU's current price per unit; None for any
    other (Spot, preemptible, a commitment, a licence) or one with no paid tier."""
    category = sku.category
    if category.usage_type != "OnDemand" or category.resource_family not in _FAMILIES:
        return None
    if not sku.pricing_info:
        return None
    expression = sku.pricing_info[-1].pricing_expression  # the timeline's latest
    tiers = sorted(expression.tiered_rates, key=lambda tier: tier.start_usage_amount)
    # A tier at 0 is a free allowance the whole billing account shares (Static Ip Charge's
    # first hour, a standard VM's address's first 744 h, 5 GiB of snapshots): what one more
    # resource costs is the first paid tier. No paid tier: no price (unknown, never zero).
    paid = [tier.unit_price for tier in tiers if _amount(tier.unit_price) > 0]
    if not paid:
        return None
    return Rate(
        description=sku.description,
        unit=expression.usage_unit,
        regions=frozenset(region.casefold() for region in sku.service_regions),
        price=_amount(paid[0]),
        currency=paid[0].currency_code or CURRENCY,
    )


_FAMILIES = ("Compute", "Storage", "Network")  # Network: the IP address SKUs


def _amount(money: Any) -> float:
    return float(money.units + money.nanos / 1e9)


def _price(query: PriceQuery, rates: list[Rate], fetched: str) -> ListedPrice | None:
    if query.kind == kinds.VM:
        return _vm_price(query, rates, fetched)
    if query.kind == kinds.DISK:
        return _disk_price(query, rates, fetched)
    if query.kind == kinds.PUBLIC_IP:
        return _address_price(query, rates, fetched)
    if query.kind == kinds.SNAPSHOT:
        return _snapshot_price(query, rates, fetched)
    return None


def _vm_price(query: PriceQuery, rates: list[Rate], fetched: str) -> ListedPrice | None:
    shape = shape_of(query.sku)
    stem = _stem(shape) if shape is not None else None
    core = _find(rates, f"{stem} Core running in ", VCPU_HOUR, query.region) if stem else None
    ram = _find(rates, f"{stem} Ram running in ", GIB_HOUR, query.region) if stem else None
    if shape is None or core is None or ram is None:
        return None  # unknown, never zero: no shape, or no rate in its region
    return ListedPrice(
        hourly=shape.vcpus * core.price + shape.memory_gib * ram.price,
        currency=core.currency,
        source=SOURCE,
        fetched=fetched,
        detail=f"{_count(shape.vcpus)} x {core.description} + "
        f"{_count(shape.memory_gib)} GiB x {ram.description}",
    )


def _disk_price(query: PriceQuery, rates: list[Rate], fetched: str) -> ListedPrice | None:
    stem = _DISKS.get(query.sku)
    capacity = _find(rates, stem, GIB_MONTH, query.region, whole=True) if stem else None
    if capacity is None:
        return None
    return _per_gib_hour(capacity, fetched)


def _address_price(query: PriceQuery, rates: list[Rate], fetched: str) -> ListedPrice | None:
    stem, served = _ADDRESSES.get(query.sku, (None, None))
    if stem is None or (query.sku == IN_USE and query.region.casefold() == "global"):
        return None  # a global address in use is a global forwarding rule's, never a VM's
    rate = _find(rates, stem, HOUR, served or query.region, whole=True)
    if rate is None:
        return None
    said = "reserved, used by nothing" if query.sku == RESERVED else "in use, by a standard VM"
    return ListedPrice(
        hourly=rate.price,
        currency=rate.currency,
        source=SOURCE,
        fetched=fetched,
        detail=f"{rate.description}, per hour ({said})",
    )


def _snapshot_price(query: PriceQuery, rates: list[Rate], fetched: str) -> ListedPrice | None:
    regional, multi = _SNAPSHOTS.get(query.sku, (None, None))
    location = query.region.casefold()
    served = _MULTI_REGIONS.get(location)
    stem = regional if served is None else multi
    storage = _find(rates, stem, GIB_MONTH, served or location, whole=True) if stem else None
    if storage is None:
        return None  # unknown, never zero: no SKU of its class there
    return _per_gib_hour(storage, fetched)


def _per_gib_hour(monthly: Rate, fetched: str) -> ListedPrice:
    """A GiB-month rate per GiB-hour: the query's quantity (the GiB) multiplies it."""
    return ListedPrice(
        hourly=monthly.price / HOURS_PER_MONTH,
        currency=monthly.currency,
        source=SOURCE,
        fetched=fetched,
        detail=f"{monthly.description}, per GiB-month / {HOURS_PER_MONTH:g} h",
    )


def _stem(shape: Shape) -> str | None:
    predefined, custom = _SERIES.get(shape.series, (None, None))
    return custom if shape.custom else predefined


def _find(
    rates: list[Rate], stem: str, unit: str, region: str, *, whole: bool = False
) -> Rate | None:
    """The rate whose description starts with `stem` (`whole`: is `stem`, or `stem in
    <place>`), billed per `unit`, in `region`."""
    wanted = region.casefold()
    for rate in rates:
        named = (
            rate.description == stem or rate.description.startswith(f"{stem} in ")
            if whole
            else rate.description.startswith(stem)
        )
        if named and rate.unit == unit and wanted in rate.regions:
            return rate
    return None


def _count(value: float) -> str:
    return f"{value:g}"

"""`--provider gcp`: Google Cloud's vocabulary for the audit, read from `gcloud` exports.

What is built: the offline inputs (cloudguard_gcp.export: `gcloud asset
search-all-resources` and `gcloud compute instances list`, told apart by
shape), GCP's kinds by asset type (cloudguard_gcp.kinds), labels read as tags
with names compared case-insensitively (a label key is lower case by
definition: cloudguard_gcp.labels), projects as the accounts, zones' regions.

Prices come from the Cloud Billing Catalog API (cloudguard_gcp.prices): a
machine type's vCPUs and memory at its series' on-demand rates in its region.

Not yet: the live sweep (Cloud Asset Inventory's searchAllResources, paged),
reaping. A live sweep fails closed (did not run, 75) naming what to use
instead; there is no reaper, so `reap apply` refuses with "cannot reap".
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from cloudguard.cloud.pricing import PriceQuery
from cloudguard.cloud.records import Resource, SourceFailure, SweepRequest, SweepResult
from cloudguard_gcp import kinds, prices
from cloudguard_gcp.export import AssetSearchExport, InstancesListExport

NOT_BUILT = (
    "the live Google Cloud sweep is not built yet; audit a `gcloud asset "
    "search-all-resources --format=json` or `gcloud compute instances list --format=json` "
    "export with --inventory"
)


class GcpAdapter:
    """`cloudguard audit --provider gcp` (offline: `--inventory FILE` of a gcloud export)."""

    name = "gcp"
    credential_names: tuple[str, ...] = ()  # no live sweep: no credential is taken yet

    # -- what the core asks of a cloud (cloudguard.cloud.adapter.CloudAdapter) --
    export_parsers = (AssetSearchExport(), InstancesListExport())
    # Compute Engine bills an instance's vCPUs and memory only while it is RUNNING; a
    # TERMINATED (stopped) or SUSPENDED one bills its disks (and a suspended one its
    # memory's storage), which are resources of their own.
    billable_power_states = frozenset({"running"})
    power_notes: Mapping[str, str] = MappingProxyType({})
    hourly_prices: Mapping[str, float] = MappingProxyType({})  # from the Billing Catalog alone
    kind_billing = kinds.BILLING
    # Nothing is reaped yet: a kind missing here is never acted on.
    reap_actions: Mapping[str, Mapping[str, str]] = MappingProxyType({})
    any_kind_actions: Mapping[str, str] = MappingProxyType({})
    data_kinds = frozenset({"file.googleapis.com/instance", "bigquery.googleapis.com/dataset"})
    # An instance re-created under its name has the same full resource name (its numeric
    # id differs, kept as `uid`).
    ids_never_reused = False
    # Label keys are lower case by definition (cloudguard_gcp.labels): a configured
    # `Task-Id` names the label `task-id`. Resource names are lower case too.
    case_insensitive_names = True
    options: tuple[Any, ...] = (prices.BILLING_CATALOG_ENDPOINT,)

    def check_options(self, values: Mapping[str, Any]) -> None:
        return None  # its one option (the catalog endpoint) goes with any other

    def price_key(self, size: str) -> str:
        return size.casefold()  # machine types are lower case by definition

    def price_query(self, resource: Resource) -> PriceQuery | None:
        return prices.price_query(resource)

    def price_list(self, request: SweepRequest) -> prices.BillingCatalog | None:
        return prices.price_list(request)

    def delete_command(self, resource: Resource) -> str | None:
        return None  # not yet

    def scope_of(self, resource: Resource) -> str:
        return resource.account  # the project

    def sweep(self, request: SweepRequest) -> SweepResult:
        # Fail closed: never "clean" for a sweep that read nothing.
        return SweepResult(resources=(), failures=(SourceFailure(source="gcp", reason=NOT_BUILT),))

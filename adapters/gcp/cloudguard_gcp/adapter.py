"""`--provider gcp`: Google Cloud's vocabulary for the audit, swept live or read from exports.

What is built: the live sweep (cloudguard_gcp.live: Cloud Asset Inventory's
searchAllResources per scope, paged, and Compute Engine's aggregated lists where
state decides billing; credentials by the one endpoint rule,
cloudguard_gcp.credentials), the offline inputs (cloudguard_gcp.export: `gcloud
asset search-all-resources` and `gcloud compute instances list`, told apart by
shape), GCP's kinds by asset type (cloudguard_gcp.kinds), labels read as tags
with names compared case-insensitively (a label key is lower case by
definition: cloudguard_gcp.labels), projects as the accounts, zones' regions.

Prices come from the Cloud Billing Catalog API (cloudguard_gcp.prices): a
machine type's vCPUs and memory at its series' on-demand rates in its region.

Reaping (cloudguard_gcp.reaper): instances are stopped or deleted; disks (zonal,
regional), addresses (regional, global) and snapshots deleted, each bound to its
numeric id; a plan lists
every other kind with the `gcloud` command a person would run
(cloudguard_gcp.delete_commands). Google's clients are imported inside the
sweep, the reaper and the price list: importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from cloudguard.cloud import kinds as shared_kinds
from cloudguard.cloud.pricing import PriceQuery
from cloudguard.cloud.reaping import DESTRUCTIVE, REVERSIBLE
from cloudguard.cloud.records import Resource, SweepRequest, SweepResult
from cloudguard_gcp import credentials, delete_commands, kinds, labels, prices
from cloudguard_gcp.export import AssetSearchExport, InstancesListExport
from cloudguard_gcp.options import OPTIONS

if TYPE_CHECKING:
    from cloudguard_gcp.reaper import GcpReaper


class GcpAdapter:
    """`cloudguard audit --provider gcp --gcp-scope SCOPE` (live), or `--inventory FILE` of a
    gcloud export (offline)."""

    name = "gcp"
    # default (application default credentials, or --gcp-key-file), fake-gcp (loopback only)
    credential_names: tuple[str, ...] = credentials.NAMES

    # -- what the core asks of a cloud (cloudguard.cloud.adapter.CloudAdapter) --
    export_parsers = (AssetSearchExport(), InstancesListExport())
    # Compute Engine bills an instance's vCPUs and memory only while it is RUNNING; a
    # TERMINATED (stopped) or SUSPENDED one bills its disks (and a suspended one its
    # memory's storage), which are resources of their own.
    billable_power_states = frozenset({"running"})
    power_notes: Mapping[str, str] = MappingProxyType({})
    hourly_prices: Mapping[str, float] = MappingProxyType({})  # from the Billing Catalog alone
    kind_billing = kinds.BILLING
    # Compute Engine's verbs (cloudguard_gcp.reaper); a kind missing here is never acted on.
    reap_actions: Mapping[str, Mapping[str, str]] = MappingProxyType(
        {
            shared_kinds.VM: MappingProxyType({REVERSIBLE: "stop", DESTRUCTIVE: "delete"}),
            shared_kinds.DISK: MappingProxyType({DESTRUCTIVE: "delete"}),
            shared_kinds.PUBLIC_IP: MappingProxyType({DESTRUCTIVE: "delete"}),
            shared_kinds.SNAPSHOT: MappingProxyType({DESTRUCTIVE: "delete"}),
        }
    )
    any_kind_actions: Mapping[str, str] = MappingProxyType({})
    data_kinds = frozenset({"file.googleapis.com/instance", "bigquery.googleapis.com/dataset"})
    # An instance re-created under its name has the same full resource name (its numeric
    # id differs, kept as `uid`).
    ids_never_reused = False
    # Label keys are lower case by definition (cloudguard_gcp.labels): a configured
    # `Task-Id` names the label `task-id`. Resource names are lower case too.
    case_insensitive_names = True

    def tag_name(self, name: str) -> str:
        """A configured tag name as the label key a fleet writes (`fleet.task` ->
        `fleet_task`), which is what the audit and the reaper read."""
        return labels.label_key(name)

    # --gcp-scope, --gcp-key-file, --billing-catalog-endpoint
    options: tuple[Any, ...] = (*OPTIONS, prices.BILLING_CATALOG_ENDPOINT)

    def check_options(self, values: Mapping[str, Any]) -> None:
        return None  # each option stands alone

    def price_key(self, size: str) -> str:
        return size.casefold()  # machine types are lower case by definition

    def price_query(self, resource: Resource) -> PriceQuery | None:
        return prices.price_query(resource)

    def price_list(self, request: SweepRequest) -> prices.BillingCatalog | None:
        return prices.price_list(request)

    def delete_command(self, resource: Resource) -> str | None:
        # A kind the reaper does not act on is listed with what a person would run.
        return delete_commands.delete_command(resource)

    def scope_of(self, resource: Resource) -> str:
        return resource.account  # the project

    def sweep(self, request: SweepRequest) -> SweepResult:
        from cloudguard_gcp import live

        return live.sweep(request)

    def reaper(self, request: SweepRequest) -> GcpReaper:
        """The live side of `cloudguard reap apply`, with the sweep's identity and clients."""
        from cloudguard_gcp.reaper import GcpReaper

        return GcpReaper(request)

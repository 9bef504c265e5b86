"""The Azure live inventory: `cloudguard audit --provider azure`.

Per subscription it makes ONE paged, subscription-wide VM listing that
already carries power state (`virtualMachines.list_all(statusOnly=true)`),
never one call per resource group or per VM (Cloud Custodian's per-VM
instance view is what makes its sweeps slow and throttled, c7n #2254), plus
one paged managed-disk listing for fleet-tagged disks attached to nothing.
Resource-group and region filters are applied client-side: ARM has no
server-side filter for them on this API, and a per-group listing would
multiply the calls.

Subscriptions are swept concurrently with a bound. Waiting is budgeted
(cloudguard_azure.retry): one retry budget reaches every azure-core retry
counter, backoff has full jitter, Retry-After is honoured, the remaining-quota
headers pace the sweep, and each subscription has a time budget. A page that
still fails makes the subscription try once more, resuming at that page's
nextLink (cloudguard_azure.paging); anything still failing makes that
subscription a `SourceFailure` (the engine exits 75) while the others are
reported: a subscription is reported whole or not at all. Azure SDK imports
live inside the functions, so importing this module (entry-point discovery)
stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from cloudguard.cloud import kinds as cloud_kinds
from cloudguard.cloud.kinds import wanted as kinds_wanted
from cloudguard.cloud.pricing import PriceQuery
from cloudguard.cloud.progress import told
from cloudguard.cloud.reaping import DESTRUCTIVE, REVERSIBLE
from cloudguard.cloud.records import Resource, SourceFailure, SweepRequest, SweepResult
from cloudguard_azure import (
    credentials,
    generic,
    kinds,
    normalise,
    prices,
    resource_graph,
    session,
)
from cloudguard_azure.budget import Clock, RetrySettings
from cloudguard_azure.export import AzCliExport, AzGraphQueryExport, AzResourceListExport
from cloudguard_azure.options import ENGINE, OPTIONS
from cloudguard_azure.session import (
    ARM_SCOPE,
    arm_scope,
    client_options,
    describe_error,
    preflight,
)

if TYPE_CHECKING:
    from cloudguard_azure.reaper import AzureReaper

# Subscription states whose resources can still exist and bill. Disabled and
# Deleted subscriptions have their VMs deallocated by Azure.
_READABLE_STATES = {"enabled", "warned", "pastdue"}
# Subscriptions - List (Microsoft.Resources), read as JSON (cloudguard_azure.paging).
SUBSCRIPTIONS = "/subscriptions?api-version=2022-12-01"


# A subscription whose page still fails after its retries is tried once more,
# from that page on; a second failure names it.
ATTEMPTS_PER_SUBSCRIPTION = 2

# The session's names, importable from here as before.
__all__ = [
    "ARM_SCOPE",
    "AzureAdapter",
    "RetrySettings",
    "arm_scope",
    "client_options",
    "describe_error",
    "preflight",
]


@dataclass(frozen=True)
class _SubscriptionSweep:
    subscription: str
    resources: tuple[Resource, ...] = ()
    failure: SourceFailure | None = None


class AzureAdapter:
    """Registered as `azure` in the `cloudguard.adapters` entry-point group."""

    name = "azure"
    # The --credential names it accepts; anything else is a usage error before the sweep.
    credential_names = tuple(credentials.CREDENTIALS)
    options = OPTIONS  # --engine

    # -- what the core asks of a cloud (cloudguard.cloud.adapter.CloudAdapter) --
    export_parsers = (AzCliExport(), AzResourceListExport(), AzGraphQueryExport())
    # Azure bills a VM shut down from inside the OS ("VM stopped") until it is deallocated.
    billable_power_states = frozenset({"running", "starting", "stopping", "stopped"})
    power_notes: Mapping[str, str] = MappingProxyType(
        {"stopped": "stopped but still allocated: compute bills until deallocated"}
    )
    hourly_prices: Mapping[str, float] = MappingProxyType({})  # in the bundled table
    kind_billing = kinds.BILLING  # which kinds bill while idle, and when
    reap_actions: Mapping[str, Mapping[str, str]] = MappingProxyType(
        {
            "vm": MappingProxyType({REVERSIBLE: "deallocate", DESTRUCTIVE: "delete"}),
            "disk": MappingProxyType({DESTRUCTIVE: "delete"}),
            "nic": MappingProxyType({DESTRUCTIVE: "delete"}),
            "public-ip": MappingProxyType({DESTRUCTIVE: "delete"}),
            # Whole, only when everything in it is reviewed and reapable (the reaper reads it).
            "resource-group": MappingProxyType({DESTRUCTIVE: "delete"}),
        }
    )
    # Any other kind is deleted by its id, with the api-version its provider lists.
    any_kind_actions: Mapping[str, str] = MappingProxyType({DESTRUCTIVE: "delete"})
    # An ARM id is a name: a VM deleted and re-created under it has the same id.
    ids_never_reused = False
    # Tag names and ARM ids compare case-insensitively (ARM echoes the creator's case).
    case_insensitive_names = True

    def price_key(self, size: str) -> str:
        # ARM reports sizes in whatever case they were requested in.
        return size.casefold()

    def price_query(self, resource: Resource) -> PriceQuery | None:
        return prices.price_query(resource)

    def price_list(self, request: SweepRequest) -> prices.RetailPrices | None:
        return prices.price_list(request)

    def delete_command(self, resource: Resource) -> str:
        if resource.kind == cloud_kinds.RESOURCE_GROUP:
            return f"az group delete --name {resource.name} --subscription {resource.account} --yes"
        return f"az resource delete --ids {resource.id}"

    def scope_of(self, resource: Resource) -> str:
        return resource.group  # a resource group names the workload; its subscription less so

    def check_options(self, values: Mapping[str, Any]) -> None:
        pass  # --engine's one value is checked by its parser

    def __init__(
        self,
        credential: Any | None = None,
        *,
        retry: RetrySettings | None = None,
        connection_timeout: float = 10.0,
        read_timeout: float = 60.0,
    ) -> None:
        # `credential` is for code that holds a TokenCredential already (tests, the
        # demo); the CLI instantiates with no arguments and names one in the request.
        self._credential = credential
        self._retry = retry  # None: the request's retry budget with the default waits
        self._connection_timeout = connection_timeout
        self._read_timeout = read_timeout

    # -- the sweep ---------------------------------------------------------------------

    def sweep(self, request: SweepRequest) -> SweepResult:
        credential = self._credential
        owned = credential is None
        if credential is None:
            try:
                credential = session.open_credential(request)
            except session.SessionRefused as refused:
                return _failed(refused.source, refused.reason)
        try:
            return self._sweep_with(credential, request)
        finally:
            if owned:
                session.close_credential(credential)

    # -- reaping (cloudguard reap apply) ------------------------------------------------

    def reaper(self, request: SweepRequest) -> AzureReaper:
        """The live side of `cloudguard reap apply`, with this sweep's credential rules and
        client options (endpoint, CA bundle, retries, timeouts)."""
        from cloudguard_azure.reaper import AzureReaper

        # One clock for every client of the run, restarted for each item: its reads (and
        # an action's polls) wait within the item's budget, never azure-core's minutes.
        clock = Clock(self._settings(request), unit="item")
        return AzureReaper(
            request,
            lambda: self._client_options(request, clock),
            clock,
            credential=self._credential,
        )

    def _sweep_with(self, credential: Any, request: SweepRequest) -> SweepResult:
        subscriptions, failures = self._subscriptions(credential, request)
        if not subscriptions:
            if not failures:
                failures.append(
                    SourceFailure(
                        "azure subscriptions",
                        "no subscription to sweep: pass --subscription ID or "
                        "--all-subscriptions (which found none readable)",
                    )
                )
            return SweepResult((), tuple(failures))
        try:
            engine = ENGINE.value_in(request.settings)
            by_graph = resource_graph.uses_resource_graph(engine, len(subscriptions))
        except ValueError as exc:
            return _failed("azure engine", str(exc))
        if by_graph:
            swept_by_graph = told(
                request,
                f"azure resource graph ({len(subscriptions)} subscriptions)",
                lambda: resource_graph.sweep(
                    credential,
                    request,
                    subscriptions,
                    # The ARM engine's own construction, one clock (deadline) per batch's client.
                    lambda: self._client_options(request, Clock(self._settings(request))),
                    _filter(request),
                ),
            )
            return SweepResult(swept_by_graph.resources, (*failures, *swept_by_graph.failures))
        workers = max(1, min(request.concurrency, len(subscriptions)))
        with ThreadPoolExecutor(workers, thread_name_prefix="cloudguard-azure") as pool:
            swept = list(
                pool.map(
                    lambda sub: told(
                        request,
                        f"azure subscription {sub}",
                        lambda: self._sweep_subscription(credential, request, sub),
                    ),
                    subscriptions,
                )
            )
        resources = tuple(r for s in swept for r in s.resources)
        failures.extend(s.failure for s in swept if s.failure is not None)
        return SweepResult(resources, tuple(failures))

    def _subscriptions(
        self, credential: Any, request: SweepRequest
    ) -> tuple[list[str], list[SourceFailure]]:
        wanted = list(dict.fromkeys(s.strip() for s in request.subscriptions if s.strip()))
        if not request.all_subscriptions:
            return wanted, []
        from cloudguard_azure import paging

        try:
            options = self._client_options(request, Clock(self._settings(request)))
            with session.tenant_client(credential, options) as client:
                listed = [
                    str(s.get("subscriptionId"))
                    for s in paging.every_item(client, SUBSCRIPTIONS)
                    if str(s.get("state") or "").lower() in _READABLE_STATES
                ]
        except Exception as exc:  # every SDK failure is named, never swallowed
            return wanted, [
                SourceFailure("azure subscriptions (--all-subscriptions)", describe_error(exc))
            ]
        seen = {s.casefold() for s in wanted}
        return wanted + [s for s in listed if s.casefold() not in seen], []

    def _sweep_subscription(
        self, credential: Any, request: SweepRequest, subscription: str
    ) -> _SubscriptionSweep:
        from azure.mgmt.compute import ComputeManagementClient
        from azure.mgmt.resource.resources import ResourceManagementClient

        from cloudguard_azure import paging

        listings = _listings(subscription, request, _filter(request), f"azure:{subscription}")
        clock = Clock(self._settings(request))
        for attempt in range(1, ATTEMPTS_PER_SUBSCRIPTION + 1):
            try:
                # Fresh clients (and connection pools) per attempt; one clock for them all.
                with (
                    ComputeManagementClient(
                        credential, subscription, **self._client_options(request, clock)
                    ) as compute,
                    ResourceManagementClient(
                        credential, subscription, **self._client_options(request, clock)
                    ) as resources,
                ):
                    clients = {"compute": compute, "resources": resources}
                    for listing in listings:
                        listing.read(clients[listing.client])
                break
            except Exception as exc:  # every SDK failure is named, never swallowed
                stopped = next((x for x in listings if not x.done), listings[-1])
                if attempt < ATTEMPTS_PER_SUBSCRIPTION and paging.is_transient(exc):
                    continue
                # Half a subscription is not reported as if it were whole: the sweep of
                # this subscription did not run (exit 75), named.
                where = f"listing {stopped.name}, page {stopped.pages + 1}"
                tries = f" (attempt {attempt} of the subscription)" if attempt > 1 else ""
                return _SubscriptionSweep(
                    subscription,
                    failure=SourceFailure(
                        f"azure subscription {subscription}",
                        f"{describe_error(exc)} while {where}{tries}",
                    ),
                )
        return _SubscriptionSweep(subscription, tuple(r for x in listings for r in x.resources))

    def _settings(self, request: SweepRequest) -> RetrySettings:
        settings = self._retry or RetrySettings(total=request.retries)
        if request.item_budget is not None:  # reaping: the budget is per item
            settings = replace(settings, time_budget=request.item_budget.total_seconds())
        return settings

    def _client_options(self, request: SweepRequest, clock: Clock) -> dict[str, Any]:
        """For ONE client: its policies are linked into its own pipeline, so each client
        gets its own, all waiting on `clock` (one deadline, one account of the waits)."""
        return client_options(
            request,
            clock,
            connection_timeout=self._connection_timeout,
            read_timeout=self._read_timeout,
        )


# -- helpers ---------------------------------------------------------------------------


def _filter(request: SweepRequest) -> Callable[[Resource], bool]:
    groups = {g.casefold() for g in request.resource_groups}
    regions = {r.replace(" ", "").casefold() for r in request.regions}

    def keep(resource: Resource) -> bool:
        if groups and resource.group.casefold() not in groups:
            return False
        return not (regions and resource.region.replace(" ", "").casefold() not in regions)

    return keep


# Types that have listings of their own (with power state; with the disk's unique id and
# attachment): `resources.list` leaves them to those.
_OWN_LISTINGS = frozenset({"microsoft.compute/virtualmachines", "microsoft.compute/disks"})
# What `resources.list` is asked to expand: ARM's creation time of every resource.
_EXPAND = "createdTime,changedTime"


def _listings(
    subscription: str, request: SweepRequest, keep: Callable[[Resource], bool], source: str
) -> list[Any]:
    """Per subscription, the listings the requested kinds need, each ONE paged request
    sequence: VMs with their power state (`virtualMachines.list_all statusOnly=true`),
    managed disks (`disks.list`), every other resource (`resources.list` with ARM's
    creation time) and the resource groups (`resourceGroups.list`). The SDKs' own request
    builders give the paths and api-versions they were generated for."""
    from cloudguard_azure.paging import Listing

    wanted = kinds_wanted(request.kinds)
    urls = _listing_urls(subscription)

    def asked(kind: str) -> bool:
        return wanted is None or kind in wanted

    def kept(resource: Resource) -> Resource | None:
        return resource if asked(resource.kind) and keep(resource) else None

    listings: list[Listing] = []
    if asked(cloud_kinds.VM):
        take_vm = lambda item: kept(normalise.vm_from_arm(item, subscription, source))  # noqa: E731
        listings.append(
            Listing("VMs (virtualMachines.list_all statusOnly=true)", urls.vms, take_vm)
        )
    if asked(cloud_kinds.DISK):
        take_disk = lambda item: kept(normalise.disk_from_arm(item, subscription, source))  # noqa: E731
        listings.append(Listing("managed disks (disks.list)", urls.disks, take_disk))
    if wanted is None or wanted - {cloud_kinds.VM, cloud_kinds.DISK, cloud_kinds.RESOURCE_GROUP}:

        def take_any(item: dict[str, Any]) -> Resource | None:
            if str(item.get("type") or "").casefold() in _OWN_LISTINGS:
                return None
            return kept(generic.resource_from_arm(item, source))

        listings.append(
            Listing("resources (resources.list)", urls.resources, take_any, client="resources")
        )
    if asked(cloud_kinds.RESOURCE_GROUP):
        take_group = lambda item: kept(generic.group_from_arm(item, source))  # noqa: E731
        listings.append(
            Listing("resource groups (resourceGroups.list)", urls.groups, take_group, "resources")
        )
    return listings


class _ListingUrls(NamedTuple):
    vms: str
    disks: str
    resources: str
    groups: str


def _listing_urls(subscription: str) -> _ListingUrls:
    """The listings' URLs from the installed SDKs' own request builders: the paths and
    api-versions they were generated for."""
    try:
        from azure.mgmt.compute.operations._operations import (
            build_disks_list_request,
            build_virtual_machines_list_all_request,
        )
        from azure.mgmt.resource.resources.operations._operations import (
            build_resource_groups_list_request,
            build_resources_list_request,
        )
    except ImportError:
        # Multi-API SDKs (azure-mgmt-compute before 35, azure-mgmt-resource before 24, as a
        # suite beside cloudguard may pin) have no such builders: the same listings at the
        # api-versions of their latest profiles.
        base = f"/subscriptions/{subscription}"
        compute = f"{base}/providers/Microsoft.Compute"
        return _ListingUrls(
            f"{compute}/virtualMachines?api-version=2024-11-01&statusOnly=true",
            f"{compute}/disks?api-version=2024-03-02",
            f"{base}/resources?api-version=2022-09-01&$expand=createdTime%2CchangedTime",
            f"{base}/resourcegroups?api-version=2022-09-01",
        )
    vms = build_virtual_machines_list_all_request(subscription_id=subscription, status_only="true")
    return _ListingUrls(
        vms.url,
        build_disks_list_request(subscription_id=subscription).url,
        build_resources_list_request(subscription_id=subscription, expand=_EXPAND).url,
        build_resource_groups_list_request(subscription_id=subscription).url,
    )


def _failed(source: str, reason: str) -> SweepResult:
    return SweepResult((), (SourceFailure(source, reason),))

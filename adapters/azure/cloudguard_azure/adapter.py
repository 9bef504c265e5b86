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

import logging
import re
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from cloudguard.audit.model import Resource, SourceFailure, SweepRequest, SweepResult
from cloudguard.reap.model import DESTRUCTIVE, REVERSIBLE
from cloudguard_azure import credentials, normalise, resource_graph
from cloudguard_azure.budget import Clock, RetrySettings, TimeBudgetExhausted
from cloudguard_azure.export import AzCliExport

if TYPE_CHECKING:
    from cloudguard_azure.reaper import AzureReaper

ARM_SCOPE = "https://management.azure.com/.default"


def arm_scope(endpoint: str | None) -> str:
    """The token scope of the management endpoint: sovereign clouds have their own
    (https://management.chinacloudapi.cn/.default, ...); the public cloud's otherwise.
    A loopback endpoint gets its own scope too, never the real cloud's: a token for
    it would be good at real ARM (only `fake-arm` answers loopback; see credentials)."""
    if not endpoint:
        return ARM_SCOPE
    return endpoint.rstrip("/") + "/.default"


# Subscription states whose resources can still exist and bill. Disabled and
# Deleted subscriptions have their VMs deallocated by Azure.
_READABLE_STATES = {"enabled", "warned", "pastdue"}


# A subscription whose page still fails after its retries is tried once more,
# from that page on; a second failure names it.
ATTEMPTS_PER_SUBSCRIPTION = 2

__all__ = ["AzureAdapter", "RetrySettings", "client_options", "describe_error", "preflight"]


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

    # -- what the core asks of a cloud (cloudguard.audit.adapter_interface.CloudAdapter) --
    export_parsers = (AzCliExport(),)
    # Azure bills a VM shut down from inside the OS ("VM stopped") until it is deallocated.
    billable_power_states = frozenset({"running", "starting", "stopping", "stopped"})
    power_notes: Mapping[str, str] = MappingProxyType(
        {"stopped": "stopped but still allocated: compute bills until deallocated"}
    )
    hourly_prices: Mapping[str, float] = MappingProxyType({})  # in the bundled table
    reap_actions: Mapping[str, Mapping[str, str]] = MappingProxyType(
        {
            "vm": MappingProxyType({REVERSIBLE: "deallocate", DESTRUCTIVE: "delete"}),
            "disk": MappingProxyType({DESTRUCTIVE: "delete"}),
            # Dependents only (`--with-dependents`): what a VM's delete leaves billing.
            "nic": MappingProxyType({DESTRUCTIVE: "delete"}),
            "public-ip": MappingProxyType({DESTRUCTIVE: "delete"}),
        }
    )
    # An ARM id is a name: a VM deleted and re-created under it has the same id.
    ids_never_reused = False
    # Tag names and ARM ids compare case-insensitively (ARM echoes the creator's case).
    case_insensitive_names = True

    def price_key(self, size: str) -> str:
        # ARM reports sizes in whatever case they were requested in.
        return size.casefold()

    def scope_of(self, resource: Resource) -> str:
        return resource.group  # a resource group names the workload; its subscription less so

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
        credential_name = request.credential or "default"
        chosen = f"azure credential {credential_name}"
        credential = self._credential
        owned = credential is None
        if credential is None:
            try:
                credential = credentials.build(request.credential, request.endpoint)
            except ValueError as exc:  # CredentialChoiceError, or azure-identity's own check
                return _failed(chosen, f"cannot be used: {exc}")
        try:
            scope = arm_scope(request.endpoint)
            if owned and (refused := preflight(credential, credential_name, scope)):
                return _failed(chosen, refused)
            return self._sweep_with(credential, request)
        finally:
            if owned and hasattr(credential, "close"):
                credential.close()

    # -- reaping (cloudguard reap apply) ------------------------------------------------

    def reaper(self, request: SweepRequest) -> AzureReaper:
        """The live side of `cloudguard reap apply`, with this sweep's credential rules and
        client options (endpoint, CA bundle, retries, timeouts)."""
        from cloudguard_azure.reaper import AzureReaper

        return AzureReaper(request, self._client_options(request), credential=self._credential)

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
            by_graph = resource_graph.uses_resource_graph(request.engine, len(subscriptions))
        except ValueError as exc:
            return _failed("azure engine", str(exc))
        if by_graph:
            swept_by_graph = resource_graph.sweep(
                credential,
                request,
                subscriptions,
                # The ARM engine's own construction, one clock (deadline) per batch's client.
                lambda: self._client_options(request, Clock(self._settings(request))),
                _filter(request),
            )
            return SweepResult(swept_by_graph.resources, (*failures, *swept_by_graph.failures))
        workers = max(1, min(request.concurrency, len(subscriptions)))
        with ThreadPoolExecutor(workers, thread_name_prefix="cloudguard-azure") as pool:
            swept = list(
                pool.map(
                    lambda sub: self._sweep_subscription(credential, request, sub), subscriptions
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
        from azure.mgmt.resource.subscriptions import SubscriptionClient

        try:
            options = self._client_options(request, Clock(self._settings(request)))
            with SubscriptionClient(credential, **options) as client:
                listed = [
                    str(s.subscription_id)
                    for s in client.subscriptions.list()
                    if normalise.text(s.state).lower() in _READABLE_STATES
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

        from cloudguard_azure import paging

        keep = _filter(request)
        source = f"azure:{subscription}"
        clock = Clock(self._settings(request))

        def vm(item: dict[str, Any]) -> Resource | None:
            resource = normalise.vm_from_arm(item, subscription, source)
            return resource if keep(resource) else None

        def disk(item: dict[str, Any]) -> Resource | None:
            if not normalise.is_unattached_arm(item):
                return None
            resource = normalise.disk_from_arm(item, subscription, source)
            wanted = keep(resource) and resource.tag(request.task_tag) is not None
            return resource if wanted else None

        listings = _listings(subscription, vm, disk)
        for attempt in range(1, ATTEMPTS_PER_SUBSCRIPTION + 1):
            try:
                # A fresh client (and connection pool) per attempt; one clock for both.
                options = self._client_options(request, clock)
                with ComputeManagementClient(credential, subscription, **options) as compute:
                    for listing in listings:
                        listing.read(compute)
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
        if self._retry is not None:
            return self._retry
        return RetrySettings(total=request.retries)

    def _client_options(self, request: SweepRequest, clock: Clock | None = None) -> dict[str, Any]:
        """For ONE client with `clock` (the sweep); without, a dict any number of clients
        may share (the reaper): azure-core's own RetryPolicy, built by each client from
        the same budget on all four of its counters, without jitter, pacing or deadline."""
        timeouts = {
            "connection_timeout": self._connection_timeout,
            "read_timeout": self._read_timeout,
        }
        if clock is not None:
            return client_options(request, clock, **timeouts)
        settings = self._settings(request)
        return {
            **_base_options(request, **timeouts),
            "retry_total": settings.total,
            "retry_status": settings.total,
            "retry_read": settings.total,
            "retry_connect": settings.total,
            "retry_backoff_factor": settings.backoff_factor,
            "retry_backoff_max": settings.backoff_max,
        }


def client_options(
    request: SweepRequest,
    clock: Clock,
    *,
    connection_timeout: float = 10.0,
    read_timeout: float = 60.0,
) -> dict[str, Any]:
    """Keyword arguments for ONE azure-mgmt client (or ARMPipelineClient) that reads for a
    sweep: endpoint, CA bundle, timeouts, and the budgeted retry policy and quota pacing
    of `clock`. Call it once per client: a pipeline links the policy objects it is given
    into its own chain, so two live clients must not share them. The clients of one
    subscription share its clock (one deadline, one account of the waits)."""
    from cloudguard_azure.retry import BudgetedRetryPolicy, QuotaPacing, fold_sdk_warnings

    fold_sdk_warnings()
    return {
        **_base_options(request, connection_timeout=connection_timeout, read_timeout=read_timeout),
        "retry_policy": BudgetedRetryPolicy(clock),
        "per_retry_policies": [QuotaPacing(clock)],
    }


def _base_options(
    request: SweepRequest, *, connection_timeout: float, read_timeout: float
) -> dict[str, Any]:
    options: dict[str, Any] = {
        "connection_timeout": connection_timeout,
        "read_timeout": read_timeout,
        "user_agent": "cloudguard-audit",  # visible in the Activity Log's request records
    }
    if request.endpoint:
        options["base_url"] = request.endpoint.rstrip("/")
        options["credential_scopes"] = [arm_scope(request.endpoint)]
        if credentials.is_loopback(request.endpoint):
            # A loopback endpoint is reached directly: an HTTPS_PROXY from the
            # environment must not carry it (and its token) off the machine.
            options["use_env_settings"] = False
    if request.ca_bundle:
        options["connection_verify"] = request.ca_bundle
    return options


# -- helpers ---------------------------------------------------------------------------


def _filter(request: SweepRequest) -> Callable[[Resource], bool]:
    groups = {g.casefold() for g in request.resource_groups}
    regions = {r.replace(" ", "").casefold() for r in request.regions}

    def keep(resource: Resource) -> bool:
        if groups and resource.group.casefold() not in groups:
            return False
        return not (regions and resource.region.replace(" ", "").casefold() not in regions)

    return keep


def _listings(
    subscription: str,
    vm: Callable[[dict[str, Any]], Resource | None],
    disk: Callable[[dict[str, Any]], Resource | None],
) -> list[Any]:
    """Per subscription: ONE paged VM listing that carries power state, one disk listing.
    The SDK's own request builders give the paths and api-versions it was generated for."""
    from azure.mgmt.compute.operations._operations import (
        build_disks_list_request,
        build_virtual_machines_list_all_request,
    )

    from cloudguard_azure.paging import Listing

    vms = build_virtual_machines_list_all_request(subscription_id=subscription, status_only="true")
    disks = build_disks_list_request(subscription_id=subscription)
    return [
        Listing("VMs (virtualMachines.list_all statusOnly=true)", vms.url, vm),
        Listing("managed disks (disks.list)", disks.url, disk),
    ]


def preflight(credential: Any, name: str, scope: str = ARM_SCOPE) -> str | None:
    """Ask for one ARM token before sweeping: a missing identity is one clear failure
    naming the chain that was tried, not N identical per-subscription failures."""
    from azure.core.exceptions import ClientAuthenticationError

    try:
        with _identity_warnings_folded():
            credential.get_token(scope)
    except ClientAuthenticationError as exc:
        return f"no token for {scope}: tried {credentials.describe(name)}: {_attempts(str(exc))}"
    return None


@contextmanager
def _identity_warnings_folded() -> Iterator[None]:
    # azure-identity logs each failed credential of a chain as a raw WARNING
    # block on stderr; the same facts are in the exception, which becomes our
    # one failure line. Quiet the logger while we ask, restore it after.
    logger = logging.getLogger("azure.identity")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _attempts(text: str) -> str:
    """A chain's failure, one short clause per credential tried (their first sentence)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    tried = [line for line in lines if re.match(r"^\w+Credential: ", line)]
    if not tried:
        return _first_lines(text, 12)
    return " | ".join(line.split(". ")[0].rstrip(".") for line in tried)


def describe_error(exc: BaseException) -> str:
    """A one-line reason naming the HTTP status and ARM error code where there is one."""
    from azure.core.exceptions import ClientAuthenticationError, DecodeError, IncompleteReadError

    if isinstance(exc, TimeBudgetExhausted):
        return f"gave up: {exc}"
    if isinstance(exc, IncompleteReadError):
        # azure-core's text is urllib3's tuple, and its log a bare "Incomplete download.".
        read = _INCOMPLETE.search(str(exc))
        detail = f": {read.group(1)} bytes read, {read.group(2)} more expected" if read else ""
        return f"connection reset mid-response (page cut off{detail}); retries exhausted"
    status = getattr(exc, "status_code", None)
    error = getattr(exc, "error", None)
    code = getattr(error, "code", None)
    message = getattr(error, "message", None) or _first_lines(str(exc), 1)
    if isinstance(exc, DecodeError):
        return f"unreadable response (not valid JSON): {_first_lines(str(exc), 1)}"
    if status is not None:
        return f"HTTP {status}{f' {code}' if code else ''}: {message}"
    if isinstance(exc, ClientAuthenticationError):
        return f"authentication failed: {_first_lines(str(exc), 3)}"
    return f"{type(exc).__name__}: {_first_lines(str(exc), 1)}"


_INCOMPLETE = re.compile(r"IncompleteRead\((\d+) bytes read, (\d+) more expected\)")


def _first_lines(text: str, count: int) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[:count])


def _failed(source: str, reason: str) -> SweepResult:
    return SweepResult((), (SourceFailure(source, reason),))

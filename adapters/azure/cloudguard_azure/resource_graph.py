"""The Resource Graph engine: `cloudguard audit --provider azure --engine resource-graph`.

The ARM engine costs several paged listings per subscription; a tenant of
1,000 subscriptions is thousands of requests. Azure Resource Graph answers
one query for up to 1,000 subscriptions at once, 1,000 rows a page. Per batch
of subscriptions, every `$skipToken` page followed:

- every kind (the default): ONE query over the union of `resourcecontainers`
  (the subscriptions and their resource groups) and `resources` (every
  resource, VMs with the power state of their extended instance view), so a
  batch costs ceil(rows / 1,000) queries. A subscription Resource Graph cannot
  see has no row of its own (it leaves out what the identity cannot read,
  without an error): it is named unreadable (exit 75), never swept empty;
- `--kind vm` alone: the VM engine's two shapes, which subscriptions it can
  see, then the VMs.

Rows become the same `Resource` records the ARM engine makes (normalise.py's
mapping of power states), so both engines give the same verdicts on the same
fleet. A batch whose answer is incomplete (a failed page, `resultTruncated`
without a `$skipToken`, fewer rows than `totalRecords`) fails every
subscription in it: never a partial clean.

Resource Graph's per-user quota is obeyed: every response carries
`x-ms-user-quota-remaining` and `x-ms-user-quota-resets-after` (hh:mm:ss), and
when the quota is spent no query is sent before it resets. Throttled and
failed requests are retried by the sweep's own retry policy: the client is
built by the ARM engine's construction (same retry budget, jitter and time
budget, here one per batch). Resource Graph lags ARM by
seconds to minutes: the reaper re-reads every resource with ARM GET before it
acts, whichever engine found it.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from cloudguard.cloud import kinds
from cloudguard.cloud.records import Resource, SourceFailure, SweepRequest, SweepResult
from cloudguard_azure import kinds as azure_kinds
from cloudguard_azure import normalise
from cloudguard_azure.graph_rows import row_resource, vm_resource
from cloudguard_azure.options import ENGINES

# `--engine auto` (the default) switches to Resource Graph above this many subscriptions:
# below it the ARM engine's per-subscription listings are few and never lag.
AUTO_ABOVE_SUBSCRIPTIONS = 100
BATCH_SUBSCRIPTIONS = 1000  # the most subscriptions one Resource Graph query may name
PAGE_ROWS = 1000  # the most rows one page may hold ($top)

# The only query shapes the engine sends (the fake serves exactly these).
SUBSCRIPTIONS_QUERY = """resourcecontainers
| where type =~ 'microsoft.resources/subscriptions'
| project subscriptionId
| order by subscriptionId asc"""
VMS_QUERY = """resources
| where type =~ 'microsoft.compute/virtualmachines'
| project id, name, location, subscriptionId, tags,
    vmSize = tostring(properties.hardwareProfile.vmSize),
    timeCreated = tostring(properties.timeCreated),
    vmId = tostring(properties.vmId),
    powerState = tostring(properties.extended.instanceView.powerState.code)
| order by id asc"""
# Every kind: the subscriptions (which ones Resource Graph can see), their groups and every
# resource, in ONE paged query: a tenant costs ceil(rows / 1,000) queries.
EVERYTHING_QUERY = """resourcecontainers
| where type =~ 'microsoft.resources/subscriptions'
    or type =~ 'microsoft.resources/subscriptions/resourcegroups'
| union resources
| project id, name, type, location, subscriptionId, resourceGroup, tags, managedBy,
    sku = tostring(sku.name), skuTier = tostring(sku.tier),
    vmSize = tostring(properties.hardwareProfile.vmSize),
    timeCreated = tostring(properties.timeCreated),
    uniqueId = coalesce(tostring(properties.vmId), tostring(properties.uniqueId),
        tostring(properties.resourceGuid)),
    diskState = tostring(properties.diskState),
    diskSizeGB = toint(properties.diskSizeGB),
    powerState = tostring(properties.extended.instanceView.powerState.code)
| order by id asc"""


def uses_resource_graph(engine: str, subscriptions: int) -> bool:
    if engine not in ENGINES:
        raise ValueError(f"unknown --engine {engine!r} (choose one of: {', '.join(ENGINES)})")
    if engine == "resource-graph":
        return True
    return engine == "auto" and subscriptions > AUTO_ABOVE_SUBSCRIPTIONS


class IncompleteAnswer(Exception):
    """Resource Graph answered, but not all of it: the batch is not reported."""


# -- the per-user quota ------------------------------------------------------------------

_RESETS_AFTER = re.compile(r"^(\d+):(\d{2}):(\d{2})(?:\.\d+)?$")


def resets_after_seconds(value: str) -> float | None:
    """`x-ms-user-quota-resets-after` (hh:mm:ss) in seconds; None when unreadable."""
    found = _RESETS_AFTER.match(value.strip())
    if found is None:
        return None
    hours, minutes, seconds = (int(part) for part in found.groups())
    return hours * 3600 + minutes * 60 + seconds


class QuotaGate:
    """Shared by every query of one sweep: once a response says the quota is spent,
    no request leaves before the reset it announced."""

    def __init__(self, sleep: Callable[[float], None] = time.sleep) -> None:
        self._lock = threading.Lock()
        self._not_before = 0.0
        self._sleep = sleep
        self.waited = 0  # how many requests had to wait (reported by tests and benchmarks)

    def wait(self) -> None:
        while True:
            with self._lock:
                delay = self._not_before - time.monotonic()
                if delay > 0:
                    self.waited += 1
            if delay <= 0:
                return
            self._sleep(delay)

    def observe(self, headers: Mapping[str, str]) -> None:
        remaining = headers.get("x-ms-user-quota-remaining")
        resets = resets_after_seconds(headers.get("x-ms-user-quota-resets-after") or "")
        if remaining is None or resets is None:
            return
        try:
            spent = int(remaining) <= 0
        except ValueError:
            return
        if spent:
            with self._lock:
                self._not_before = max(self._not_before, time.monotonic() + resets)


def quota_policy(gate: QuotaGate) -> Any:
    """An azure-core policy placed after the RetryPolicy, so every attempt (retries
    included) waits for the quota and every response (429s included) reports it."""
    from azure.core.pipeline.policies import SansIOHTTPPolicy

    class ResourceGraphQuotaPolicy(SansIOHTTPPolicy):
        def on_request(self, request: Any) -> None:
            gate.wait()

        def on_response(self, request: Any, response: Any) -> None:
            gate.observe(response.http_response.headers)

    return ResourceGraphQuotaPolicy()


# -- the sweep ----------------------------------------------------------------------------


def sweep(
    credential: Any,
    request: SweepRequest,
    subscriptions: list[str],
    client_options: Callable[[], dict[str, Any]],
    keep: Callable[[Resource], bool],
    gate: QuotaGate | None = None,
) -> SweepResult:
    """Sweep `subscriptions` in batches. `client_options()` is the ARM engine's own client
    construction (endpoint, CA, timeouts, the budgeted retry policy and its deadline),
    called once per client, so both engines retry and give up alike."""
    gate = gate or QuotaGate()
    batches = [
        subscriptions[start : start + BATCH_SUBSCRIPTIONS]
        for start in range(0, len(subscriptions), BATCH_SUBSCRIPTIONS)
    ]
    workers = max(1, min(request.concurrency, len(batches)))

    def one(batch: list[str]) -> SweepResult:
        options = client_options()
        options["per_retry_policies"] = [
            *options.get("per_retry_policies", ()),
            quota_policy(gate),
        ]
        return _sweep_batch(credential, request, batch, options, keep)

    with ThreadPoolExecutor(workers, thread_name_prefix="cloudguard-resource-graph") as pool:
        results = list(pool.map(one, batches))
    # Reported subscription by subscription, in the order asked, as the ARM engine does.
    order = {sub.casefold(): index for index, sub in enumerate(subscriptions)}
    resources = sorted(
        (r for result in results for r in result.resources),
        key=lambda r: order.get(r.account.casefold(), len(order)),
    )
    return SweepResult(tuple(resources), tuple(f for result in results for f in result.failures))


def _sweep_batch(
    credential: Any,
    request: SweepRequest,
    batch: list[str],
    options: dict[str, Any],
    keep: Callable[[Resource], bool],
) -> SweepResult:
    from azure.mgmt.resourcegraph import ResourceGraphClient

    from cloudguard_azure.session import describe_error

    by_key = {sub.casefold(): sub for sub in batch}
    stage = "listing the subscriptions it can see (resourcecontainers)"
    resources: list[Resource] = []
    try:
        with ResourceGraphClient(credential, **options) as client:
            if only_vms(request):
                visible = {
                    str(row.get("subscriptionId", "")).casefold()
                    for row in _rows(client, batch, SUBSCRIPTIONS_QUERY)
                }
                readable = [sub for sub in batch if sub.casefold() in visible]
                stage = "listing VMs (resources, virtualMachines)"
                rows = _rows(client, readable, VMS_QUERY) if readable else iter(())
                resources = [
                    r for row in rows if keep(r := vm_resource(row, _account(row, by_key)))
                ]
            else:
                stage = "listing every resource (resourcecontainers, resources)"
                visible, resources = _everything(client, batch, by_key, keep)
            unreadable = [sub for sub in batch if sub.casefold() not in visible]
    except Exception as exc:  # every failure is named; half a batch is not reported
        reason = str(exc) if isinstance(exc, IncompleteAnswer) else describe_error(exc)
        return SweepResult(
            (),
            tuple(
                SourceFailure(
                    f"azure subscription {sub}",
                    f"{reason} while {stage} in Resource Graph "
                    f"(a batch of {len(batch)} subscriptions)",
                )
                for sub in batch
            ),
        )
    failures = tuple(
        SourceFailure(
            f"azure subscription {sub}",
            "Resource Graph cannot see this subscription (no read access for this identity, "
            "or it does not exist): its resources were not listed",
        )
        for sub in unreadable
    )
    return SweepResult(tuple(resources), failures)


def only_vms(request: SweepRequest) -> bool:
    """`--kind vm`: the VM engine's two queries; any other kind needs the union of all."""
    return set(request.kinds) == {kinds.VM}


def _everything(
    client: Any,
    batch: list[str],
    by_key: Mapping[str, str],
    keep: Callable[[Resource], bool],
) -> tuple[set[str], list[Resource]]:
    """(the subscriptions Resource Graph can see, every resource of theirs kept)."""
    visible: set[str] = set()
    resources: list[Resource] = []
    for row in _rows(client, batch, EVERYTHING_QUERY):
        arm_type = str(row.get("type") or "").casefold()
        if arm_type == azure_kinds.SUBSCRIPTION_TYPE:
            visible.add(str(row.get("subscriptionId") or "").casefold())
            continue
        resource = row_resource(row, _account(row, by_key))
        if keep(resource):
            resources.append(resource)
    return visible, resources


def _rows(client: Any, subscriptions: list[str], query: str) -> Iterator[dict[str, Any]]:
    """Every row of `query`, page after page by `$skipToken`; an incomplete answer raises."""
    from azure.mgmt.resourcegraph.models import QueryRequest, QueryRequestOptions

    skip_token: str | None = None
    expected: int | None = None
    seen = 0
    while True:
        page = client.resources(
            QueryRequest(
                subscriptions=subscriptions,
                query=query,
                options=QueryRequestOptions(
                    top=PAGE_ROWS, skip_token=skip_token, result_format="objectArray"
                ),
            ),
            # A query is a read sent as POST, which RetryPolicy retries only on 500/503/504:
            # let the sweep's own retry budget cover its 429s and other transient answers too.
            retry_on_methods=("POST",),
        )
        if expected is None:
            expected = int(page.total_records)
        data = page.data
        if not isinstance(data, list):
            raise IncompleteAnswer(f"Resource Graph page is not an object array: {type(data)}")
        seen += len(data)
        yield from data
        skip_token = page.skip_token or None
        if skip_token is None:
            if normalise.text(page.result_truncated).lower() == "true":
                raise IncompleteAnswer(
                    f"Resource Graph truncated the result ({seen} of {expected} rows) "
                    "and gave no $skipToken to read the rest"
                )
            break
    if seen != expected:
        raise IncompleteAnswer(
            f"Resource Graph returned {seen} rows of the {expected} it announced"
        )


# -- rows -> Resource (cloudguard_azure.graph_rows) -----------------------------------------


def _account(row: Mapping[str, Any], by_key: Mapping[str, str]) -> str:
    """The subscription as the caller named it (Resource Graph lower-cases ids)."""
    listed = str(row.get("subscriptionId") or "")
    account = by_key.get(listed.casefold())
    if account is None:
        raise IncompleteAnswer(f"Resource Graph returned a row of an unasked subscription {listed}")
    return account

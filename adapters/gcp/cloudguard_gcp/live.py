"""The live Google Cloud sweep: `cloudguard audit --provider gcp --gcp-scope SCOPE`.

1. Per scope (`--gcp-scope projects/ID|folders/N|organizations/N`; a `--subscription
   ID` is `projects/ID`), ONE paged Cloud Asset Inventory search of every resource
   of every project under it (cloudguard_gcp.asset_search): ceil(results / 500)
   requests, however many projects.
2. Per project the search found holding instances, disks, addresses or snapshots,
   that kind's Compute Engine listing (cloudguard_gcp.compute_state), whose records
   replace the search's: the state that decides billing, as it is now.
   A project holding none of them costs no Compute request.

Scopes are searched, and projects listed, concurrently with a bound
(`--concurrency`), each told as it begins and ends (`SweepRequest.progress`).
Fail closed: a credential that may not go to the endpoint, a scope whose search
fails (403 denied, 429 throttled past the retry budget, 5xx, a broken page), a
project whose listing fails or is incomplete, each is a `SourceFailure` naming
it (the audit did not run, 75), and what it held is not reported: a scope, and
a project, is reported whole or not at all. A scope that names no project the
identity can search is a 403 from the API, never an empty clean scope.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from cloudguard.cloud.kinds import wanted as kinds_wanted
from cloudguard.cloud.progress import told
from cloudguard.cloud.records import Resource, SourceFailure, SweepRequest, SweepResult
from cloudguard_gcp import asset_search, clients, compute_state, credentials
from cloudguard_gcp.options import GCP_KEY_FILE, GCP_SCOPE

T = TypeVar("T")

NO_SCOPE = (
    "no scope to sweep: name one with --gcp-scope projects/ID, folders/NUMBER or "
    "organizations/NUMBER (or --subscription PROJECT_ID), or audit a `gcloud asset "
    "search-all-resources --format=json` export with --inventory"
)


def scopes_of(request: SweepRequest) -> list[str]:
    """The scopes asked for, each once, in the order given."""
    asked = [
        *GCP_SCOPE.value_in(request.settings),
        *(f"projects/{s}" for s in request.subscriptions),
    ]
    return list(dict.fromkeys(asked))


def sweep(request: SweepRequest) -> SweepResult:
    scopes = scopes_of(request)
    if not scopes:
        return SweepResult(resources=(), failures=(SourceFailure(source="gcp", reason=NO_SCOPE),))
    key_file = GCP_KEY_FILE.value_in(request.settings)
    try:
        identity = credentials.build(request.credential, key_file, request.endpoint)
    except credentials.CredentialRefused as refused:
        who = credentials.describe(request.credential, key_file)
        return SweepResult(
            (), (SourceFailure(f"gcp credential {who}", f"cannot be used: {refused}"),)
        )

    keep = _keep(request)
    searched = _each(request, scopes, lambda scope: _search(identity, request, scope))
    found: dict[str, Resource] = {}
    failures: list[SourceFailure] = []
    for result in searched:
        failures.extend(result.failures)
        for resource in result.resources:  # a project under two scopes is read twice, kept once
            found.setdefault(resource.id, resource)

    # Which projects hold which of the kinds whose state Compute Engine keeps.
    wanted = kinds_wanted(request.kinds)
    held: dict[str, set[str]] = {}
    for resource in found.values():
        listing = compute_state.listing_of(resource)
        if listing and (wanted is None or resource.kind in wanted):
            held.setdefault(resource.account, set()).add(listing)
    compute = _ComputeClients(identity, request)
    try:
        listed = _each(
            request, sorted(held), lambda project: _list(compute, request, project, held[project])
        )
    finally:
        compute.close()
    unread: set[str] = set()
    replaced: dict[str, set[str]] = {}
    fresh: list[Resource] = []
    for project, result in zip(sorted(held), listed, strict=True):
        if result.failures:
            failures.extend(result.failures)
            unread.add(project)  # reported whole or not at all
            continue
        replaced[project] = held[project]
        fresh.extend(result.resources)
    resources = [
        r
        for r in found.values()
        if r.account not in unread
        and compute_state.listing_of(r) not in replaced.get(r.account, ())
    ]
    resources.extend(fresh)
    return SweepResult(
        resources=tuple(sorted((r for r in resources if keep(r)), key=lambda r: r.id)),
        failures=tuple(failures),
    )


def _search(identity: Any, request: SweepRequest, scope: str) -> SweepResult:
    try:
        client = clients.asset_client(identity, request)
        return SweepResult(resources=tuple(asset_search.search(client, request, scope)))
    except Exception as exc:  # every failure is named; a part of a scope is never reported
        return SweepResult(
            (), (SourceFailure(f"gcp scope {scope}", _reason(exc, "searchAllResources")),)
        )


class _ComputeClients:
    """One Compute client per kind and worker thread, for the whole sweep. A client per
    listing made a new session, and so a new TLS connection and token, for every project
    (a 1,000-project benchmark took about twice as long); a session is not shared between
    threads."""

    def __init__(self, identity: Any, request: SweepRequest) -> None:
        self._identity, self._request = identity, request
        self._local = threading.local()
        self._made: list[Any] = []
        self._lock = threading.Lock()

    def get(self, listing: str) -> Any:
        mine: dict[str, Any] = self._local.__dict__.setdefault("clients", {})
        if listing not in mine:
            mine[listing] = clients.compute_client(listing, self._identity, self._request)
            with self._lock:
                self._made.append(mine[listing])
        return mine[listing]

    def close(self) -> None:
        with self._lock:
            made, self._made = self._made, []
        for client in made:
            client.transport.close()


def _list(
    compute: _ComputeClients, request: SweepRequest, project: str, listings: set[str]
) -> SweepResult:
    resources: list[Resource] = []
    for listing in sorted(listings):
        try:
            client = compute.get(listing)
            resources.extend(compute_state.read(client, request, project, listing))
        except Exception as exc:
            return SweepResult(
                (),
                (
                    SourceFailure(
                        f"gcp project {project}", _reason(exc, compute_state.method_of(listing))
                    ),
                ),
            )
    return SweepResult(resources=tuple(resources))


def _reason(exc: Exception, what: str) -> str:
    if isinstance(exc, asset_search.IncompleteAnswer | compute_state.IncompleteListing):
        return f"{exc}: not read"
    return f"{clients.describe_error(exc)} (while reading {what}): not read"


def _each(request: SweepRequest, scopes: Iterable[str], read: Callable[[str], T]) -> list[T]:
    """`read(scope)` of every scope, a bounded few at once, each told as it goes."""
    scopes = list(scopes)
    if not scopes:
        return []
    workers = max(1, min(request.concurrency, len(scopes)))
    with ThreadPoolExecutor(workers, thread_name_prefix="cloudguard-gcp") as pool:
        return list(pool.map(lambda s: told(request, _told_as(s), lambda: read(s)), scopes))


def _told_as(scope: str) -> str:
    return f"gcp scope {scope}" if "/" in scope else f"gcp project {scope} (compute)"


def _keep(request: SweepRequest) -> Callable[[Resource], bool]:
    """`--kind` and `--region`, applied to what was read (the search reads every kind)."""
    wanted = kinds_wanted(request.kinds)
    regions = {r.casefold() for r in request.regions}

    def keep(resource: Resource) -> bool:
        if wanted is not None and resource.kind not in wanted:
            return False
        return not regions or resource.region.casefold() in regions

    return keep

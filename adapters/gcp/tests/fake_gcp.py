"""A fake Google Cloud over HTTPS on 127.0.0.1: the two APIs the live sweep reads, as they answer.

- Cloud Asset Inventory `GET /v1/{scope}:searchAllResources` (scope `projects/ID` or
  `projects/NUMBER`, `folders/N`, `organizations/N`): `results[]` of ResourceSearchResult
  (`name`, `assetType`, `project`, `folders`, `organization`, `displayName`, `location`,
  `labels`, `state`, `createTime`, ...) and `nextPageToken`; `pageSize` is capped at 500, and
  0 or none is the server's default;
- Compute Engine `GET /compute/v1/projects/{project}/aggregated/{instances|disks|addresses}`:
  `items` keyed by scope (`zones/Z`, `regions/R`), each `{instances: [...]}` or, for a scope
  with nothing on the page, a `NO_RESULTS_ON_PAGE` warning; `maxResults` 0-500 (default 500),
  `nextPageToken`, and `unreachables` for the scopes it could not read;
- Compute Engine `GET /compute/v1/projects/{project}/global/{addresses|snapshots}`: a plain
  list (`items[]`, `nextPageToken`, the same `maxResults`);
- `POST /token`: an OAuth token endpoint (a service-account key's `token_uri` may name it).

The world (`GcpWorld`) holds projects and their resources; the search shows what Asset
Inventory indexed (an instance's `searched_state` may lag its status, as the index does),
the Compute listings what the API says now. `GcpFaults` is what it does wrong on purpose: a
denied scope or project (403), a status for matching requests (429, 500, 503), an unreachable
zone. Every request is counted by operation, with its query and Authorization header kept, so
a test can say what a sweep cost and which credential reached the fake. Errors are Google's
JSON envelope (`error.code`, `message`, `status`, `errors[]`), which the real clients parse.
A test module, not shipped: the real google-cloud-* clients read it through their REST
transports, which is the proof that its shapes are right.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import shutil
import ssl
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import trustme

COMPUTE_V1 = "https://www.googleapis.com/compute/v1"
RESOURCE_MANAGER = "//cloudresourcemanager.googleapis.com"
ORGANIZATION = "organizations/100000000001"
FOLDER = "folders/200000000001"
SEARCH_DEFAULT_PAGE = 100
SEARCH_MAX_PAGE = 500
COMPUTE_MAX_PAGE = 500
STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}
SEARCH_ROUTE = re.compile(r"^/v1/((?:projects|folders|organizations)/[^/:]+):searchAllResources$")
COMPUTE_ROUTE = re.compile(r"^/compute/v1/projects/([^/]+)/aggregated/(instances|disks|addresses)$")
GLOBAL_ROUTE = re.compile(r"^/compute/v1/projects/([^/]+)/global/(addresses|snapshots)$")
# A global list's collection -> the API's name of it (as requests are counted).
GLOBAL_LISTS = {"addresses": "globalAddresses", "snapshots": "snapshots"}


_IDS = itertools.count(7312294612745210001)


def unique_id() -> str:
    """A numeric id as Compute gives one: never the same for two resources of the world."""
    return str(next(_IDS))


def _ago(days: float) -> datetime:
    return datetime.now(UTC) - timedelta(days=days)


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Project:
    id: str
    number: str
    folder: str = FOLDER


@dataclass
class Instance:
    project: str
    zone: str
    name: str
    status: str = "RUNNING"
    machine_type: str = "n2-standard-4"
    labels: dict[str, str] = field(default_factory=dict)
    created: datetime = field(default_factory=lambda: _ago(2))
    searched_state: str | None = None  # what the asset index still says; None: the status
    id: str = field(default_factory=unique_id)
    deletion_protection: bool = False
    # Disks attached that outlive the instance's delete (autoDelete false), by name.
    kept_disks: list[str] = field(default_factory=list)


@dataclass
class Disk:
    """A zonal disk (`zone`), or a regional one (`region`, and `zone` empty)."""

    project: str
    zone: str
    name: str
    size_gb: int = 10
    type: str = "pd-balanced"
    users: list[str] = field(default_factory=list)  # instance names of the same zone
    labels: dict[str, str] = field(default_factory=dict)
    created: datetime = field(default_factory=lambda: _ago(2))
    id: str = field(default_factory=unique_id)
    region: str = ""

    @property
    def place(self) -> str:
        """`zones/Z` or `regions/R`, as Compute's paths and aggregated scopes name it."""
        return f"regions/{self.region}" if self.region else f"zones/{self.zone}"


@dataclass
class Address:
    """A regional address, or a global one (`region` is `global`)."""

    project: str
    region: str
    name: str
    status: str = "RESERVED"
    address_type: str = "EXTERNAL"
    users: list[str] = field(default_factory=list)  # instance names (zone, name)
    labels: dict[str, str] = field(default_factory=dict)
    created: datetime = field(default_factory=lambda: _ago(2))
    ip: str = "203.0.113.7"
    id: str = field(default_factory=unique_id)

    @property
    def place(self) -> str:
        return "global" if self.region == "global" else f"regions/{self.region}"


@dataclass
class Snapshot:
    """A (global) snapshot of a disk, stored in `location` (a region or a multi-region)."""

    project: str
    name: str
    source_disk: str = ""  # zones/Z/disks/D
    storage_bytes: int = 3 * 2**30
    snapshot_type: str = "STANDARD"
    location: str = "eu"
    labels: dict[str, str] = field(default_factory=dict)
    created: datetime = field(default_factory=lambda: _ago(2))
    id: str = field(default_factory=unique_id)


@dataclass
class Other:
    """Any other asset, as the search shows it (a bucket, a topic): no Compute listing."""

    project: str
    asset_type: str
    path: str  # after //SERVICE/
    service: str
    location: str = "europe-west4"
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class GcpWorld:
    projects: dict[str, Project] = field(default_factory=dict)
    instances: list[Instance] = field(default_factory=list)
    disks: list[Disk] = field(default_factory=list)
    addresses: list[Address] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)
    others: list[Other] = field(default_factory=list)

    def project(self, project_id: str, number: str, folder: str = FOLDER) -> Project:
        self.projects[project_id] = found = Project(project_id, number, folder)
        return found

    def in_scope(self, scope: str) -> list[Project]:
        kind, _, value = scope.partition("/")
        if kind == "projects":
            return [p for p in self.projects.values() if value in (p.id, p.number)]
        if kind == "folders":
            return [p for p in self.projects.values() if p.folder == scope]
        return list(self.projects.values()) if scope == ORGANIZATION else []

    # -- what Cloud Asset Inventory indexed ------------------------------------------------

    def search_rows(self, project: Project) -> list[dict[str, Any]]:
        p = project.id
        rows = [
            _row(project, f"compute.googleapis.com/projects/{p}/zones/{i.zone}/instances/{i.name}",
                 "compute.googleapis.com/Instance", i.zone, i.labels,
                 i.searched_state or i.status, i.created)
            for i in self.instances if i.project == p
        ]  # fmt: skip
        rows += [
            _row(project, f"compute.googleapis.com/projects/{p}/{d.place}/disks/{d.name}",
                 "compute.googleapis.com/Disk", d.region or d.zone, d.labels, "READY", d.created)
            for d in self.disks if d.project == p
        ]  # fmt: skip
        rows += [
            _row(project, f"compute.googleapis.com/projects/{p}/{a.place}/addresses/{a.name}",
                 "compute.googleapis.com/GlobalAddress" if a.region == "global"
                 else "compute.googleapis.com/Address", a.region, a.labels, a.status, a.created)
            for a in self.addresses if a.project == p
        ]  # fmt: skip
        rows += [
            _row(project, f"compute.googleapis.com/projects/{p}/global/snapshots/{s.name}",
                 "compute.googleapis.com/Snapshot", "global", s.labels, "READY", s.created)
            for s in self.snapshots if s.project == p
        ]  # fmt: skip
        rows += [
            _row(project, f"{o.service}/{o.path}", o.asset_type, o.location, o.labels, "", _ago(3))
            for o in self.others
            if o.project == p
        ]
        return rows

    # -- what Compute Engine lists now -----------------------------------------------------

    def compute_items(self, project: str, kind: str) -> list[tuple[str, dict[str, Any]]]:
        """(scope key, item) of one aggregated list, in the API's order (scope, then name)."""
        items: list[tuple[str, dict[str, Any]]]
        if kind == "instances":
            items = [(f"zones/{i.zone}", _instance(i, self.disks)) for i in self.instances
                     if i.project == project]  # fmt: skip
        elif kind == "disks":
            items = [(d.place, _disk(d)) for d in self.disks if d.project == project]
        else:  # the aggregated list of addresses holds the regional ones alone
            items = [(a.place, _address(a)) for a in self.addresses
                     if a.project == project and a.region != "global"]  # fmt: skip
        return sorted(items, key=lambda item: (item[0], item[1]["name"]))

    def global_items(self, project: str, kind: str) -> list[dict[str, Any]]:
        """The items of one global list (addresses, snapshots), in the API's order (name)."""
        items = (
            [_address(a) for a in self.addresses if a.project == project and a.region == "global"]
            if kind == "addresses"
            else [_snapshot(s) for s in self.snapshots if s.project == project]
        )
        return sorted(items, key=lambda item: str(item["name"]))


def _row(
    project: Project,
    path: str,
    asset_type: str,
    location: str,
    labels: dict[str, str],
    state: str,
    created: datetime,
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "name": f"//{path}",
        "assetType": asset_type,
        "project": f"projects/{project.number}",
        "folders": [project.folder],
        "organization": ORGANIZATION,
        "displayName": path.rsplit("/", 1)[-1],
        "location": location,
        "createTime": rfc3339(created),
        "updateTime": rfc3339(datetime.now(UTC)),
        "parentFullResourceName": f"{RESOURCE_MANAGER}/projects/{project.number}",
        "parentAssetType": "cloudresourcemanager.googleapis.com/Project",
    }
    if labels:
        row["labels"] = dict(labels)
    if state:
        row["state"] = state
    return row


def _zone_url(project: str, zone: str) -> str:
    return f"{COMPUTE_V1}/projects/{project}/zones/{zone}"


def _instance(i: Instance, disks: list[Disk]) -> dict[str, Any]:
    zone = _zone_url(i.project, i.zone)
    attached = [
        d for d in disks if d.project == i.project and d.zone == i.zone and i.name in d.users
    ]
    item: dict[str, Any] = {
        "kind": "compute#instance",
        "id": i.id,
        "creationTimestamp": i.created.astimezone(timezone_pacific()).isoformat(
            timespec="milliseconds"
        ),
        "name": i.name,
        "machineType": f"{zone}/machineTypes/{i.machine_type}",
        "status": i.status,
        "zone": zone,
        "disks": [
            {
                "kind": "compute#attachedDisk",
                "type": "PERSISTENT",
                "mode": "READ_WRITE",
                "source": f"{zone}/disks/{d.name}",
                "deviceName": d.name,
                "boot": n == 0,
                "autoDelete": d.name not in i.kept_disks,
            }
            for n, d in enumerate(attached)
        ],
        "selfLink": f"{zone}/instances/{i.name}",
        "labelFingerprint": "42WmSpB8rSM=",
        "deletionProtection": i.deletion_protection,
    }
    if i.labels:
        item["labels"] = dict(i.labels)
    return item


def _disk(d: Disk) -> dict[str, Any]:
    where = f"{COMPUTE_V1}/projects/{d.project}/{d.place}"
    item: dict[str, Any] = {
        "kind": "compute#disk",
        "id": d.id,
        "creationTimestamp": d.created.astimezone(timezone_pacific()).isoformat(
            timespec="milliseconds"
        ),
        "name": d.name,
        "sizeGb": str(d.size_gb),
        "status": "READY",
        "selfLink": f"{where}/disks/{d.name}",
        "type": f"{where}/diskTypes/{d.type}",
        "labelFingerprint": "42WmSpB8rSM=",
        "physicalBlockSizeBytes": "4096",
    }
    if d.region:  # a regional disk is replicated in two of its region's zones
        item["region"] = where
        item["replicaZones"] = [
            f"{COMPUTE_V1}/projects/{d.project}/zones/{d.region}-{z}" for z in "ab"
        ]
    else:
        item["zone"] = where
    if d.users:
        zone = f"{COMPUTE_V1}/projects/{d.project}/zones/{d.zone or d.region + '-a'}"
        item["users"] = [f"{zone}/instances/{user}" for user in d.users]
    if d.labels:
        item["labels"] = dict(d.labels)
    return item


def _address(a: Address) -> dict[str, Any]:
    where = f"{COMPUTE_V1}/projects/{a.project}/{a.place}"
    item: dict[str, Any] = {
        "kind": "compute#address",
        "id": a.id,
        "creationTimestamp": a.created.astimezone(timezone_pacific()).isoformat(
            timespec="milliseconds"
        ),
        "name": a.name,
        "address": a.ip,
        "status": a.status,
        "selfLink": f"{where}/addresses/{a.name}",
        "networkTier": "PREMIUM",
        "addressType": a.address_type,
        "labelFingerprint": "42WmSpB8rSM=",
    }
    if a.region != "global":  # a global address has no region field
        item["region"] = where
    if a.users:
        zone = "europe-west4-a" if a.region == "global" else f"{a.region}-a"
        item["users"] = [
            f"{COMPUTE_V1}/projects/{a.project}/zones/{zone}/instances/{user}" for user in a.users
        ]
    if a.labels:
        item["labels"] = dict(a.labels)
    return item


def _snapshot(s: Snapshot) -> dict[str, Any]:
    item: dict[str, Any] = {
        "kind": "compute#snapshot",
        "id": s.id,
        "creationTimestamp": s.created.astimezone(timezone_pacific()).isoformat(
            timespec="milliseconds"
        ),
        "name": s.name,
        "status": "READY",
        "diskSizeGb": "100",
        "storageBytes": str(s.storage_bytes),
        "storageBytesStatus": "UP_TO_DATE",
        "storageLocations": [s.location],
        "snapshotType": s.snapshot_type,
        "selfLink": f"{COMPUTE_V1}/projects/{s.project}/global/snapshots/{s.name}",
        "labelFingerprint": "42WmSpB8rSM=",
    }
    if s.source_disk:
        item["sourceDisk"] = f"{COMPUTE_V1}/projects/{s.project}/{s.source_disk}"
    if s.labels:
        item["labels"] = dict(s.labels)
    return item


def timezone_pacific() -> Any:
    from datetime import timezone

    return timezone(timedelta(hours=-8))  # Compute writes the offset of its own zone


# -- faults ---------------------------------------------------------------------------------


@dataclass
class Rule:
    """Answer `status` to requests whose path and query `match` (a regular expression,
    searched), `times` times (None: every time), saying `Retry-After: retry_after` if given
    (seconds, or an HTTP date)."""

    match: str
    status: int
    times: int | None = None
    retry_after: int | str | None = None


@dataclass
class GcpFaults:
    denied_scopes: set[str] = field(default_factory=set)  # searchAllResources: 403
    denied_projects: set[str] = field(default_factory=set)  # Compute listings: 403
    unreachable: dict[str, list[str]] = field(default_factory=dict)  # project -> scopes
    rules: list[Rule] = field(default_factory=list)
    # Fewer results a search page than asked (the API may return fewer than pageSize).
    search_page: int | None = None
    # Reaping (fake_gcp_items): the Operation of an action on a resource of this name ends
    # DONE with this (code, message) and no effect; every Operation stays RUNNING this many
    # more waits.
    operation_errors: dict[str, tuple[str, str]] = field(default_factory=dict)
    slow_operations: int = 0
    # Requests (by operation, `instances.delete`) carried out and then answered 503 this many
    # times: an answer lost on its way back.
    lost_answers: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, target: str) -> Rule | None:
        with self.lock:
            for rule in self.rules:
                if re.search(rule.match, target) and rule.times != 0:
                    if rule.times is not None:
                        rule.times -= 1
                    return rule
        return None


# -- the server -----------------------------------------------------------------------------


@dataclass
class Seen:
    operation: str
    query: dict[str, str]
    authorization: str


@dataclass
class FakeGcp:
    base_url: str
    ca_pem: str
    world: GcpWorld
    faults: GcpFaults
    counts: Counter[str] = field(default_factory=Counter)
    # Every TCP connection accepted, before TLS: a client that distrusts the CA still came.
    connections: int = 0
    seen: list[Seen] = field(default_factory=list)
    searched: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Reaping (fake_gcp_items): Operations by name, the waits each has left, and every
    # action accepted as (verb, kind, name, id), failed Operations' included.
    operations: dict[str, dict[str, Any]] = field(default_factory=dict)
    operation_waits: dict[str, int] = field(default_factory=dict)
    actions: list[tuple[str, str, str, str]] = field(default_factory=list)
    request_ids: dict[str, str] = field(default_factory=dict)  # requestId -> its Operation
    # Called with each request's operation before it is answered (not the token's): what
    # someone else does between two of the reaper's requests.
    before: Callable[[str], None] | None = None

    def requests(self, operation: str) -> list[Seen]:
        with self.lock:
            return [s for s in self.seen if s.operation == operation]

    @property
    def total(self) -> int:
        with self.lock:
            return len(self.seen)


def google_error(status: int, message: str, reason: str = "") -> tuple[int, dict[str, Any]]:
    return status, {
        "error": {
            "code": status,
            "message": message,
            "status": STATUS.get(status, "UNKNOWN"),
            "errors": [{"message": message, "domain": "global", "reason": reason or "error"}],
        }
    }


_INJECTED = {
    429: ("Quota exceeded for quota metric 'Read requests' of service.", "rateLimitExceeded"),
    500: ("Internal error encountered.", "backendError"),
    503: ("The service is currently unavailable.", "backendError"),
}


def answer(fake: FakeGcp, method: str, raw: str, authorization: str) -> tuple[int, Any]:
    import fake_gcp_items  # reaping's routes: it imports this module's shapes

    split = urlsplit(raw)
    path = unquote(split.path)
    query = dict(parse_qsl(split.query, keep_blank_values=True))
    search, compute = SEARCH_ROUTE.match(path), COMPUTE_ROUTE.match(path)
    listed = GLOBAL_ROUTE.match(path) if method == "GET" else None
    item = fake_gcp_items.operation_name(method, path)
    operation = (
        "token" if path == "/token" and method == "POST"
        else "searchAllResources" if search and method == "GET"
        else f"{compute.group(2)}.aggregatedList" if compute and method == "GET"
        else f"{GLOBAL_LISTS[listed.group(2)]}.list" if listed
        else item if item
        else f"unrouted {method} {path}"
    )  # fmt: skip
    with fake.lock:
        fake.counts[operation] += 1
        fake.seen.append(Seen(operation, query, authorization))
    if operation == "token":
        return 200, {"access_token": "ya29.fake-gcp-granted", "expires_in": 3599,
                     "token_type": "Bearer"}  # fmt: skip
    if operation.startswith("unrouted"):
        return google_error(404, f"The requested URL {path} was not found on this server.")
    if not authorization.startswith("Bearer ") or not authorization[7:].strip():
        return google_error(
            401,
            "Request is missing required authentication credential. Expected OAuth 2 access "
            "token, login cookie or other valid authentication credential.",
            "required",
        )
    if fake.before is not None:
        fake.before(operation)
    if rule := fake.faults.take(unquote(raw)):
        message, reason = _INJECTED.get(rule.status, _INJECTED[500])
        return google_error(rule.status, message, reason)
    if item and "Operations." in item:
        return fake_gcp_items.answer_operation(fake, path)
    if item:
        answered = fake_gcp_items.answer_item(fake, method, path, query.get("requestId", ""))
        with fake.lock:
            lost = fake.faults.lost_answers[operation] > 0
            if lost:
                fake.faults.lost_answers[operation] -= 1
        return google_error(503, _INJECTED[503][0], "backendError") if lost else answered
    if search:
        return _search(fake, search.group(1), query)
    if listed:
        return _global_list(fake, listed.group(1), listed.group(2), query)
    assert compute is not None
    return _aggregated(fake, compute.group(1), compute.group(2), query)


def _token(scope: str, offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps([scope, offset]).encode()).decode()


def _offset(token: str, scope: str) -> int | None:
    if not token:
        return 0
    try:
        named, offset = json.loads(base64.urlsafe_b64decode(token.encode()))
    except ValueError:
        return None
    return int(offset) if named == scope else None


def _search(fake: FakeGcp, scope: str, query: dict[str, str]) -> tuple[int, Any]:
    projects = fake.world.in_scope(scope)
    if scope in fake.faults.denied_scopes or not projects:
        # Cloud Asset answers 403 for a scope the caller may not search and for one that
        # does not exist alike.
        return google_error(
            403,
            f"The caller does not have permission (cloudasset.assets.searchAllResources on "
            f"{scope})",
            "forbidden",
        )
    start = _offset(query.get("pageToken", ""), scope)
    if start is None:
        return google_error(400, "Invalid page token.", "badRequest")
    size = int(query.get("pageSize") or 0)
    size = SEARCH_DEFAULT_PAGE if size <= 0 else min(size, SEARCH_MAX_PAGE)
    size = min(size, fake.faults.search_page or size)
    # A search's rows are made on its first page and kept for the pages after it (a world
    # changed between two sweeps is seen by the next first page): paging stays linear.
    rows = fake.searched.get(scope) if start else None
    if rows is None:
        rows = fake.searched[scope] = sorted(
            (row for project in projects for row in fake.world.search_rows(project)),
            key=lambda row: row["name"],
        )
    body: dict[str, Any] = {"results": rows[start : start + size]}
    if start + size < len(rows):
        body["nextPageToken"] = _token(scope, start + size)
    return 200, body


def _aggregated(fake: FakeGcp, project: str, kind: str, query: dict[str, str]) -> tuple[int, Any]:
    singular = kind[:-2] if kind == "addresses" else kind[:-1]
    if project in fake.faults.denied_projects or project not in fake.world.projects:
        return google_error(
            403, f"Required 'compute.{kind}.list' permission for 'projects/{project}'", "forbidden"
        )
    scope_key = f"projects/{project}/aggregated/{kind}"
    start = _offset(query.get("pageToken", ""), scope_key)
    if start is None:
        return google_error(400, "Invalid value for field 'pageToken'.", "invalid")
    size = int(query.get("maxResults") or COMPUTE_MAX_PAGE)
    if not 0 <= size <= COMPUTE_MAX_PAGE:
        return google_error(400, "Invalid value for field 'maxResults'.", "invalid")
    size = size or COMPUTE_MAX_PAGE
    items = fake.world.compute_items(project, kind)
    grouped: dict[str, Any] = {}
    for scope, item in items[start : start + size]:
        grouped.setdefault(scope, {kind: []})[kind].append(item)
    # Every scope of the project without anything on this page says so, as Compute does.
    for scope in sorted({scope for scope, _ in items} | {"zones/us-east1-b"}):
        grouped.setdefault(
            scope,
            {"warning": {
                "code": "NO_RESULTS_ON_PAGE",
                "message": f"There are no results for scope '{scope}' on this page.",
                "data": [{"key": "scope", "value": scope}],
            }},
        )  # fmt: skip
    body: dict[str, Any] = {
        "kind": f"compute#{singular}AggregatedList",
        "id": scope_key,
        "items": grouped,
        "selfLink": f"{COMPUTE_V1}/{scope_key}",
    }
    if start + size < len(items):
        body["nextPageToken"] = _token(scope_key, start + size)
    if unreachable := fake.faults.unreachable.get(project):
        body["unreachables"] = list(unreachable)
    return 200, body


def _global_list(fake: FakeGcp, project: str, kind: str, query: dict[str, str]) -> tuple[int, Any]:
    named = GLOBAL_LISTS[kind]
    if project in fake.faults.denied_projects or project not in fake.world.projects:
        return google_error(
            403, f"Required 'compute.{named}.list' permission for 'projects/{project}'", "forbidden"
        )
    scope_key = f"projects/{project}/global/{kind}"
    start = _offset(query.get("pageToken", ""), scope_key)
    size = int(query.get("maxResults") or COMPUTE_MAX_PAGE)
    if start is None or not 0 <= size <= COMPUTE_MAX_PAGE:
        return google_error(400, "Invalid value for field 'pageToken' or 'maxResults'.", "invalid")
    size = size or COMPUTE_MAX_PAGE
    items = fake.world.global_items(project, kind)
    singular = kind[:-2] if kind == "addresses" else kind[:-1]
    body: dict[str, Any] = {
        "kind": f"compute#{singular}List",
        "id": scope_key,
        "items": items[start : start + size],
        "selfLink": f"{COMPUTE_V1}/{scope_key}",
    }
    if start + size < len(items):
        body["nextPageToken"] = _token(scope_key, start + size)
    return 200, body


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30
    disable_nagle_algorithm = True
    server: _TlsServer

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        status, body = answer(
            self.server.fake, self.command, self.path, self.headers.get("Authorization", "")
        )
        encoded = json.dumps(body, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(encoded)))
        for rule in list(self.server.fake.faults.rules):  # the rule that answered says when
            said = rule.retry_after is not None and rule.status == status
            if said and re.search(rule.match, unquote(self.path)):
                self.send_header("Retry-After", str(rule.retry_after))
                break
        self.end_headers()
        self.wfile.write(encoded)

    do_GET = do_POST = do_DELETE = _serve

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the counter is the record


class _TlsServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeGcp

    def __init__(self, tls: ssl.SSLContext) -> None:
        self.tls = tls
        super().__init__(("127.0.0.1", 0), _Handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        with self.fake.lock:
            self.fake.connections += 1
        try:
            conn = self.tls.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        try:
            _Handler(conn, client_address, self)
        except (ssl.SSLError, ConnectionError, TimeoutError):
            pass
        finally:
            conn.close()


@contextmanager
def serve(world: GcpWorld | None = None, faults: GcpFaults | None = None) -> Iterator[FakeGcp]:
    """A fake Google Cloud for the block (port 0, a throwaway trustme CA, removed after)."""
    ca = trustme.CA()
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(tls)
    workdir = Path(tempfile.mkdtemp(prefix="cloudguard-fake-gcp-"))
    server = _TlsServer(tls)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    try:
        ca_pem = workdir / "ca.pem"
        ca.cert_pem.write_to_path(str(ca_pem))
        server.fake = FakeGcp(
            f"https://127.0.0.1:{server.server_address[1]}",
            str(ca_pem),
            world or GcpWorld(),
            faults or GcpFaults(),
        )
        thread.start()
        yield server.fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
        shutil.rmtree(workdir, ignore_errors=True)

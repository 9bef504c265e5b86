"""Compute Engine's own listings, where a resource's state decides what it is and what it bills.

Cloud Asset Inventory indexes a change seconds to minutes after it happens, and
its search results carry neither an instance's machine type, nor a disk's users,
nor an address's type, nor a snapshot's stored bytes, nor any numeric id (which
binds a reap to the resource reviewed). So for each project the search found
holding instances, disks, reserved addresses or snapshots, the sweep reads that
kind's listing (an aggregated list, every zone and region in one paged listing,
or, for what is global, the global list; 500 a page) and the listing's records
replace the search's for that project:

- an instance: its `status` now (RUNNING bills compute; TERMINATED, SUSPENDED do
  not), machine type, numeric id; read by the offline instance reader
  (cloudguard_gcp.export.instance_resource), as `gcloud compute instances list`;
- a disk: its type and size, and its `users` (the instances it is attached to, or
  none: a disk attached to nothing is storage billed for nobody);
- an address, regional (`addresses`, aggregated) or global (`globalAddresses`):
  `addressType` (EXTERNAL, INTERNAL) and `status` (IN_USE by its `users`, or
  RESERVED: held and used by nothing);
- a snapshot (`snapshots`, global): its `snapshotType` (STANDARD, ARCHIVE), its
  `storageBytes` (what it bills for) and where it is stored (`storageLocations`:
  a region or a multi-region, read as its region).

A disk's, an address's and a snapshot's state is written into its `size`, the one
field a report shows beside its billing note (`pd-balanced 100 GiB, attached to
nothing`, `external, reserved, used by nothing`, `standard 12.5 GiB stored`). A
listing that is incomplete (a scope in `unreachables`, or a scope's warning other
than "no results on this page") fails its project, never a partial answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from cloudguard.cloud import kinds
from cloudguard.cloud.exports import interned, interned_tags, parse_time
from cloudguard.cloud.records import Resource, SweepRequest
from cloudguard_gcp import clients
from cloudguard_gcp.export import (
    COMPUTE,
    PROVIDER,
    instance_resource,
    last_segment,
    region_of,
)

PAGE_SIZE = 500  # maxResults: the most an aggregated list page holds
# The listing that holds each shared kind's current state (a global address: below).
LISTING_OF_KIND = {
    kinds.VM: "instances",
    kinds.DISK: "disks",  # zonal and regional: the aggregated list has both
    kinds.PUBLIC_IP: "addresses",
    kinds.SNAPSHOT: "snapshots",
}
# The listings of what is global: one list per project, no scopes (the others are aggregated).
GLOBAL_LISTINGS = frozenset({"globalAddresses", "snapshots"})
# A scope of an aggregated list with nothing on this page says so; any other warning
# (UNREACHABLE, ...) means its items were not all listed.
_EMPTY_SCOPE = "NO_RESULTS_ON_PAGE"
_PROJECT = re.compile(r"/projects/([^/]+)/")


class IncompleteListing(Exception):
    """Compute answered, but not for every zone or region: the project is unread."""


def listing_of(resource: Resource) -> str | None:
    """Which listing (aggregated, or global) holds `resource`'s current state (None: none)."""
    listing = LISTING_OF_KIND.get(resource.kind)
    if listing == "addresses" and "/global/addresses/" in resource.id:
        return "globalAddresses"
    return listing


def method_of(listing: str) -> str:
    """The API method a listing is read with, as a failure names it."""
    return f"{listing}.list" if listing in GLOBAL_LISTINGS else f"{listing}.aggregatedList"


def read(client: Any, request: SweepRequest, project: str, listing: str) -> list[Resource]:
    """Every item of one listing of `project`, as Resources, every page followed."""
    take = _TAKE[listing]
    source = f"gcp:projects/{project}"
    resources: list[Resource] = []
    token = ""
    while True:
        page = clients.first_page(
            client.list if listing in GLOBAL_LISTINGS else client.aggregated_list,
            request,
            project=project,
            max_results=PAGE_SIZE,
            page_token=token,
        )
        if listing in GLOBAL_LISTINGS:  # a list of its own: no scopes, nothing unreachable
            resources.extend(take(item, source) for item in page.items)
        elif page.unreachables:  # what a partial answer could not read: never taken as read
            raise IncompleteListing(
                f"{listing}.aggregatedList could not read {', '.join(page.unreachables)}"
            )
        else:
            for scope, scoped in page.items.items():
                warning = scoped.warning.code if "warning" in scoped else ""
                if warning and warning != _EMPTY_SCOPE:
                    raise IncompleteListing(
                        f"{listing}.aggregatedList warned {warning} for {scope}: "
                        f"{scoped.warning.message}"
                    )
                resources.extend(take(item, source) for item in getattr(scoped, listing))
        token = page.next_page_token
        if not token:
            return resources


def instance(item: Any, source: str) -> Resource:
    return instance_resource(
        {
            "kind": "compute#instance",
            "id": str(item.id) if "id" in item else "",
            "name": item.name,
            "zone": item.zone,
            "machineType": item.machine_type,
            "status": item.status,
            "labels": dict(item.labels),
            "creationTimestamp": item.creation_timestamp,
            "selfLink": item.self_link,
        },
        source,
    )


def disk(item: Any, source: str) -> Resource:
    users = [last_segment(user) for user in item.users]
    attached = f"attached to {', '.join(users)}" if users else "attached to nothing"
    size = (
        f"{last_segment(item.type_)} {item.size_gb} GiB"
        if "size_gb" in item
        else last_segment(item.type_)
    )
    return _resource(item, "disks", kinds.DISK, f"{size}, {attached}", source)


def address(item: Any, source: str) -> Resource:
    users = [last_segment(user) for user in item.users]
    state = item.status.lower().replace("_", " ")
    used = f"used by {', '.join(users)}" if users else "used by nothing"
    where = (item.address_type or "external").lower()
    return _resource(item, "addresses", kinds.PUBLIC_IP, f"{where}, {state}, {used}", source)


def snapshot(item: Any, source: str) -> Resource:
    kind = (item.snapshot_type or "standard").lower()
    stored = kind  # still being made: its bytes are not counted yet
    if "storage_bytes" in item:
        # Two decimals at most, never an exponent (a petabyte is 1048576 GiB, not 1e+06).
        gib = f"{int(item.storage_bytes) / 2**30:.2f}".rstrip("0").rstrip(".")
        stored = f"{kind} {gib} GiB stored"
    stored_in = item.storage_locations[0] if item.storage_locations else "global"
    return _resource(item, "snapshots", kinds.SNAPSHOT, stored, source, region=stored_in)


def _resource(
    item: Any, collection: str, kind: str, size: str, source: str, region: str = ""
) -> Resource:
    """A disk, an address or a snapshot, named by its full resource name as the asset
    search names it; `region` where it is stored, when its place does not say."""
    link = item.self_link
    project = found.group(1) if (found := _PROJECT.search(link)) else ""
    # A zonal disk names its zone, a regional disk and an address their region (an address
    # has no zone field at all); a global address and a snapshot neither.
    zone = last_segment(getattr(item, "zone", "") or "")
    placed = last_segment(getattr(item, "region", "") or "")
    where = f"zones/{zone}" if zone else f"regions/{placed}" if placed else "global"
    return Resource(
        provider=PROVIDER,
        account=interned(project),
        region=interned(region_of(zone) if zone else placed or region or "global"),
        group="",
        id=f"{COMPUTE}projects/{project}/{where}/{collection}/{item.name}",
        name=item.name,
        kind=kind,
        size=interned(size),
        power_state="unknown",  # no power state: it bills while it exists
        created=parse_time(item.creation_timestamp),
        tags=interned_tags(dict(item.labels), "labels"),
        source=source,
        uid=str(item.id) if "id" in item else "",
    )


_TAKE: dict[str, Callable[[Any, str], Resource]] = {
    "instances": instance,
    "disks": disk,
    "addresses": address,
    "globalAddresses": address,
    "snapshots": snapshot,
}

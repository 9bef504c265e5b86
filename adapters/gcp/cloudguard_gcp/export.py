"""`gcloud`'s JSON exports, read into `Resource` records, told apart by their shape.

- `gcloud asset search-all-resources --scope=projects/P --format=json`: a list
  of Cloud Asset Inventory `ResourceSearchResult`s, each with `name` (the full
  resource name, `//compute.googleapis.com/projects/P/zones/Z/instances/N`),
  `assetType`, `project` (`projects/<number>`), `displayName`, `location`
  (a zone, a region, `global`, a multi-region such as `us`), `labels`,
  `state` (an instance's status), `createTime`;
- `gcloud compute instances list --format=json`: a list of Compute Engine
  `Instance`s, each with `kind: compute#instance`, `id`, `name`, `zone` and
  `machineType` (URLs), `status`, `labels`, `creationTimestamp`, `selfLink`.

The asset search's every result is claimed by its `assetType`; an instance by
its `kind` (or, where a `--format` projection dropped it, a `zone` URL and a
`machineType` URL together). An entry with neither is no GCP export's, and
left to the other clouds' parsers. Both forms name the same VM the same way
(its full resource name, its project id, its zone's region), so the two
exports of one fleet cannot disagree. Stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from cloudguard.cloud.exports import (
    InventoryFormatError,
    entry_field,
    interned,
    interned_tags,
    parse_time,
)
from cloudguard.cloud.records import Resource
from cloudguard_gcp import kinds

PROVIDER = "gcp"
COMPUTE = "//compute.googleapis.com/"

# Compute Engine instance status (Instance.status) -> the shared power states.
# TERMINATED is a stopped instance (it bills its disks, not compute); SUSPENDED bills its
# memory's storage, not compute; REPAIRING is Google's, its billing not documented here.
POWER: dict[str, str] = {
    "PROVISIONING": "starting",
    "STAGING": "starting",
    "RUNNING": "running",
    "STOPPING": "stopping",
    "SUSPENDING": "stopping",
    "SUSPENDED": "stopped",
    "TERMINATED": "stopped",
    "REPAIRING": "unknown",
}

_PROJECT = re.compile(r"/projects/([^/]+)(?:/|$)")
_ZONE = re.compile(r"^([a-z]+-[a-z]+\d+)-[a-z]$")  # us-central1-a -> us-central1


class AssetSearchExport:
    """`gcloud asset search-all-resources --format=json`: a list of ResourceSearchResults."""

    description = "`gcloud asset search-all-resources --format=json` output (a list)"
    entry_description = "a Cloud Asset search result (no `assetType`)"

    def claims_entry(self, entry: Any) -> bool:
        return (
            isinstance(entry, dict)
            and isinstance(entry.get("assetType"), str)
            and isinstance(entry.get("name"), str)
        )

    def parse_entry(self, entry: Any, source: str) -> Iterator[Resource]:
        yield search_result(entry, source)

    def claims_document(self, document: Any) -> bool:
        return False  # gcloud prints a list, read entry by entry

    def parse_document(self, document: Any, source: str) -> Iterator[Resource]:
        raise InventoryFormatError("`gcloud asset search-all-resources` prints a JSON list")


class InstancesListExport:
    """`gcloud compute instances list --format=json`: a list of Compute Engine instances."""

    description = "`gcloud compute instances list --format=json` output (a list)"
    entry_description = "a Compute Engine instance (no `kind: compute#instance`)"

    def claims_entry(self, entry: Any) -> bool:
        if not isinstance(entry, dict) or "assetType" in entry:
            return False
        if entry.get("kind") == "compute#instance":
            return True
        return _is_url(entry.get("zone")) and _is_url(entry.get("machineType"))

    def parse_entry(self, entry: Any, source: str) -> Iterator[Resource]:
        yield instance_resource(entry, source)

    def claims_document(self, document: Any) -> bool:
        return False  # gcloud prints a list, read entry by entry

    def parse_document(self, document: Any, source: str) -> Iterator[Resource]:
        raise InventoryFormatError("`gcloud compute instances list` prints a JSON list")


def search_result(result: dict[str, Any], source: str) -> Resource:
    """One ResourceSearchResult (gcloud's JSON: camelCase, as the REST API's)."""
    name = result["name"]
    try:
        asset_type = entry_field(result, "assetType", str) or ""
        kind = kinds.kind_of(asset_type)
        location = entry_field(result, "location", str) or ""
        state = entry_field(result, "state", str) or ""
        return Resource(
            provider=PROVIDER,
            account=interned(_project(name, entry_field(result, "project", str))),
            region=interned(region_of(location)),
            group="",
            id=name,
            name=entry_field(result, "displayName", str) or last_segment(name),
            kind=kind,
            size="",
            power_state=POWER.get(state, "unknown") if kind == "vm" else "unknown",
            created=parse_time(entry_field(result, "createTime", str)),
            tags=_labels(result),
            source=source,
        )
    except InventoryFormatError as error:
        raise InventoryFormatError(f"{name}: {error}") from None


def instance_resource(instance: dict[str, Any], source: str) -> Resource:
    """One Compute Engine instance, named by its full resource name as the asset search
    names it (`//compute.googleapis.com/projects/P/zones/Z/instances/N`)."""
    name = instance.get("name")
    if not isinstance(name, str) or not name:
        raise InventoryFormatError("an instance has no string name")
    try:
        zone = last_segment(entry_field(instance, "zone", str) or "")
        link = entry_field(instance, "selfLink", str) or entry_field(instance, "zone", str) or ""
        project = _project(link, None)
        full_name = f"{COMPUTE}projects/{project}/zones/{zone}/instances/{name}"
        status = entry_field(instance, "status", str) or ""
        return Resource(
            provider=PROVIDER,
            account=interned(project),
            region=interned(region_of(zone)),
            group="",
            id=full_name,
            name=name,
            kind="vm",
            size=interned(last_segment(entry_field(instance, "machineType", str) or "")),
            power_state=POWER.get(status, "unknown"),
            created=parse_time(entry_field(instance, "creationTimestamp", str)),
            tags=_labels(instance),
            source=source,
            uid=str(instance.get("id") or ""),
        )
    except InventoryFormatError as error:
        raise InventoryFormatError(f"instance {name}: {error}") from None


def region_of(location: str) -> str:
    """A zone's region (`us-central1-a` -> `us-central1`); a region, `global` or a
    multi-region (`us`) as it is."""
    zone = _ZONE.match(location)
    return zone.group(1) if zone else location


def _labels(entry: dict[str, Any]) -> dict[str, str]:
    # Unread labels must not make a fleet VM look unlabelled: anything but an object of
    # strings is refused (interned_tags).
    return interned_tags(entry.get("labels"), "labels")


def _project(name: str, project: str | None) -> str:
    """The project id a full resource name or URL carries, else the `project` field's
    number (`projects/123` -> `123`: a bucket's name carries no project)."""
    found = _PROJECT.search(name)
    if found:
        return found.group(1)
    return (project or "").removeprefix("projects/")


def last_segment(path: str) -> str:
    """A URL's or a full resource name's last segment: the name it ends in."""
    return path.rstrip("/").rsplit("/", 1)[-1]


def _is_url(value: Any) -> bool:
    return isinstance(value, str) and value.startswith("https://")

"""Offline inventories: the JSON users already have, read into `Resource` records.

Shapes are told apart by their structure, not by the file name: `az vm list
[--show-details] -o json` (a JSON list of VM objects), `aws ec2
describe-instances` (an object with `Reservations`), and its `--query
'Reservations[].Instances[]'` (a flat list of instances) and
`'Reservations[*].Instances[*]'` (a list of lists) forms. `-` reads stdin.

A top-level list is decoded one entry at a time (the C decoder's
`raw_decode`), each entry dropped once it is a compact `Resource`: the whole
document is never a tree in memory, which is what made a 100,000-VM export
cost a gigabyte. Strings that repeat across VMs (regions, groups, sizes, tag
keys and values) are interned, so each is held once.

A file that cannot be read or parsed is a `SourceFailure`, never an empty
inventory: an audit that did not see the resources must not report "clean".
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

from cloudguard.audit.model import Resource, SourceFailure, SweepResult

STDIN = "-"


class InventoryFormatError(ValueError):
    """The document is JSON but is neither az nor aws output we understand."""


# `az vm list --show-details` reports "VM running", "VM deallocated", ...
_AZURE_POWER = {
    "vm running": "running",
    "vm starting": "starting",
    "vm stopping": "stopping",
    "vm stopped": "stopped",
    "vm deallocating": "deallocating",
    "vm deallocated": "deallocated",
}

# EC2 instance state names. `pending` is a start in progress; `shutting-down`
# is a termination in progress (it no longer bills compute).
_AWS_POWER = {
    "pending": "starting",
    "running": "running",
    "stopping": "stopping",
    "stopped": "stopped",
    "shutting-down": "stopping",
    "terminated": "terminated",
}

_ARM_ID = re.compile(
    r"^/subscriptions/(?P<sub>[^/]+)/resourceGroups/(?P<group>[^/]+)/", re.IGNORECASE
)
# us-east-1a -> us-east-1; us-west-2-lax-1a (a Local Zone) -> us-west-2.
_AWS_REGION = re.compile(r"^([a-z]{2}(?:-gov|-iso[a-z]*)?-[a-z]+-\d+)")


@dataclass(frozen=True)
class InventoryFile:
    """An inventory read from a file path, or from stdin when the path is `-`."""

    path: str
    stdin: TextIO | None = None  # injectable for tests; defaults to sys.stdin

    @property
    def label(self) -> str:
        return "stdin" if self.path == STDIN else self.path

    def read(self) -> SweepResult:
        source = f"inventory {self.label}"
        try:
            if self.path == STDIN:
                text = (self.stdin or sys.stdin).read()
            else:
                text = Path(self.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return _failed(source, f"cannot read: {exc}")
        if not text.strip():
            # `az vm list` prints `[]` when there are no VMs; an empty file is
            # a command that failed or was never run.
            return _failed(source, "empty file (no JSON document); an empty az list is `[]`")
        try:
            resources = tuple(_parse_text(text, sys.intern(self.label)))
        except json.JSONDecodeError as exc:
            return _failed(source, f"malformed JSON: {exc}")
        except InventoryFormatError as exc:
            return _failed(source, str(exc))
        return SweepResult(resources=resources)


def _failed(source: str, reason: str) -> SweepResult:
    return SweepResult(resources=(), failures=(SourceFailure(source=source, reason=reason),))


_NOT_AN_INVENTORY = (
    "not an inventory: expected `az vm list --show-details -o json` (a JSON list), "
    "`aws ec2 describe-instances` output (an object with Reservations), or its "
    "`--query 'Reservations[].Instances[]'` form (a list of instances)"
)
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def parse_inventory(document: Any, *, source: str) -> tuple[Resource, ...]:
    """Detect the producer of `document` and normalise its VMs."""
    if isinstance(document, list):
        return tuple(_list_entries(iter(document), source))
    if isinstance(document, dict) and "Reservations" in document:
        return _aws_instances(document, source)
    raise InventoryFormatError(_NOT_AN_INVENTORY)


def _parse_text(text: str, source: str) -> Iterator[Resource]:
    start = _SPACE.match(text).end()  # type: ignore[union-attr]
    if text.startswith("[", start):
        yield from _list_entries(_array_items(text, start), source)
    else:
        yield from parse_inventory(json.loads(text), source=source)


def _array_items(text: str, start: int) -> Iterator[Any]:
    """The entries of the JSON array at `text[start]`, decoded one at a time.

    As strict as `json.loads`: a missing comma, a trailing comma or anything
    after the closing bracket is a JSONDecodeError.
    """
    index = _SPACE.match(text, start + 1).end()  # type: ignore[union-attr]
    if text.startswith("]", index):
        _end_of_document(text, index + 1)
        return
    while True:
        item, index = _DECODER.raw_decode(text, index)
        yield item
        index = _SPACE.match(text, index).end()  # type: ignore[union-attr]
        if text.startswith(",", index):
            index = _SPACE.match(text, index + 1).end()  # type: ignore[union-attr]
        elif text.startswith("]", index):
            _end_of_document(text, index + 1)
            return
        else:
            raise json.JSONDecodeError("Expecting ',' delimiter", text, index)


def _end_of_document(text: str, index: int) -> None:
    end = _SPACE.match(text, index).end()  # type: ignore[union-attr]
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)


def _list_entries(items: Iterator[Any], source: str) -> Iterator[Resource]:
    """A list's entries: az VMs, or EC2 instances (flat, or one list per reservation)."""
    for index, item in enumerate(items):
        if isinstance(item, list):  # `Reservations[*].Instances[*]`: a list per reservation
            for instance in item:
                yield _aws_instance(instance, "", source)
        elif isinstance(item, dict) and "InstanceId" in item and "id" not in item:
            yield _aws_instance(item, "", source)
        elif isinstance(item, dict) and isinstance(item.get("id"), str):
            yield _azure_vm(item, source, index)
        else:
            raise InventoryFormatError(
                f"entry {index} is not an az VM object (no string `id`) "
                "nor an EC2 instance (no `InstanceId`)"
            )


def _azure_vm(item: Any, source: str, index: int) -> Resource:
    if not isinstance(item, dict) or not isinstance(item.get("id"), str):
        raise InventoryFormatError(f"entry {index} is not an az VM object (no string `id`)")
    arm_id: str = item["id"]
    match = _ARM_ID.match(arm_id)
    subscription = match.group("sub") if match else ""
    group = item.get("resourceGroup") or (match.group("group") if match else "")
    hardware = item.get("hardwareProfile") or {}
    # `az vm list` without -d prints no powerState at all: "unknown", whose cost is unknown.
    power = str(item.get("powerState") or "").strip().lower()
    return Resource(
        provider="azure",
        account=_intern(subscription),
        region=_intern(item.get("location")),
        group=_intern(group),
        id=arm_id,
        name=str(item.get("name") or arm_id.rsplit("/", 1)[-1]),
        kind="vm",
        size=_intern(hardware.get("vmSize")) if isinstance(hardware, dict) else "",
        power_state=_AZURE_POWER.get(power, "unknown"),
        created=parse_time(item.get("timeCreated")),
        tags=_string_tags(item.get("tags")),
        source=source,
        uid=str(item.get("vmId") or ""),
    )


def _aws_instances(document: Mapping[str, Any], source: str) -> tuple[Resource, ...]:
    reservations = document.get("Reservations")
    if not isinstance(reservations, list):
        raise InventoryFormatError("`Reservations` is not a list")
    resources: list[Resource] = []
    for reservation in reservations:
        if not isinstance(reservation, dict) or not isinstance(
            reservation.get("Instances", []), list
        ):
            raise InventoryFormatError("a reservation is not an object with an Instances list")
        owner = str(reservation.get("OwnerId") or "")
        for instance in reservation.get("Instances", []):
            resources.append(_aws_instance(instance, owner, source))
    return tuple(resources)


def _aws_instance(instance: Any, owner: str, source: str) -> Resource:
    """One EC2 instance; `owner` is its reservation's OwnerId ("" when the
    `--query` form left the reservation out)."""
    if not isinstance(instance, dict) or not isinstance(instance.get("InstanceId"), str):
        raise InventoryFormatError("an instance has no string InstanceId")
    tags = _aws_tags(instance.get("Tags"))
    placement = instance.get("Placement") or {}
    zone = str(placement.get("AvailabilityZone") or "")
    region = _AWS_REGION.match(zone)
    state = instance.get("State") or {}
    return Resource(
        provider="aws",
        account=_intern(owner),
        region=_intern(region.group(1) if region else zone),
        group="",
        id=instance["InstanceId"],
        name=tags.get("Name") or instance["InstanceId"],
        kind="vm",
        size=_intern(instance.get("InstanceType")),
        power_state=_AWS_POWER.get(str(state.get("Name") or ""), "unknown"),
        created=parse_time(instance.get("LaunchTime")),
        tags=tags,
        source=source,
    )


def _intern(value: Any) -> str:
    """`value` as a string, one copy however many VMs carry it."""
    return sys.intern("" if value is None else str(value))


def _string_tags(raw: Any) -> dict[str, str]:
    # az prints `"tags": null` for an untagged VM.
    if not isinstance(raw, dict):
        return {}
    return {_intern(k): _intern(v) for k, v in raw.items()}


def _aws_tags(raw: Any) -> dict[str, str]:
    if not isinstance(raw, list):
        return {}
    return {
        _intern(t["Key"]): _intern(t.get("Value"))
        for t in raw
        if isinstance(t, dict) and "Key" in t
    }


_EXCESS_FRACTION = re.compile(r"(\.\d{6})\d+")
_ZERO = timedelta(0)


def parse_time(value: Any) -> datetime | None:
    """ISO-8601 to aware UTC; None when absent or unparseable (age then unknown)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        # Azure writes 7 fractional digits, which some forms need cut to 6.
        try:
            parsed = datetime.fromisoformat(_EXCESS_FRACTION.sub(r"\1", value.strip()))
        except ValueError:
            return None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    if parsed.utcoffset() == _ZERO:
        return parsed  # already UTC (az and EC2 both write UTC): no conversion
    return parsed.astimezone(UTC)

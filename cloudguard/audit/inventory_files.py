"""Offline inventories: the JSON users already have, read into `Resource` records.

Two shapes are understood and told apart by their structure, not by the file
name: `az vm list --show-details -o json` (a JSON list of VM objects) and
`aws ec2 describe-instances` (an object with `Reservations`). `-` reads stdin.

A file that cannot be read or parsed is a `SourceFailure`, never an empty
inventory: an audit that did not see the resources must not report "clean".
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
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
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            return _failed(source, f"malformed JSON: {exc}")
        try:
            resources = parse_inventory(document, source=self.label)
        except InventoryFormatError as exc:
            return _failed(source, str(exc))
        return SweepResult(resources=resources)


def _failed(source: str, reason: str) -> SweepResult:
    return SweepResult(resources=(), failures=(SourceFailure(source=source, reason=reason),))


def parse_inventory(document: Any, *, source: str) -> tuple[Resource, ...]:
    """Detect the producer of `document` and normalise its VMs."""
    if isinstance(document, list):
        return tuple(_azure_vm(item, source, index) for index, item in enumerate(document))
    if isinstance(document, dict) and "Reservations" in document:
        return _aws_instances(document, source)
    raise InventoryFormatError(
        "not an inventory: expected `az vm list --show-details -o json` (a JSON list) "
        "or `aws ec2 describe-instances` output (an object with Reservations)"
    )


def _azure_vm(item: Any, source: str, index: int) -> Resource:
    if not isinstance(item, dict) or not isinstance(item.get("id"), str):
        raise InventoryFormatError(f"entry {index} is not an az VM object (no string `id`)")
    arm_id: str = item["id"]
    match = _ARM_ID.match(arm_id)
    subscription = match.group("sub") if match else ""
    group = item.get("resourceGroup") or (match.group("group") if match else "")
    hardware = item.get("hardwareProfile") or {}
    power = str(item.get("powerState") or "").strip().lower()
    return Resource(
        provider="azure",
        account=subscription,
        region=str(item.get("location") or ""),
        group=str(group),
        id=arm_id,
        name=str(item.get("name") or arm_id.rsplit("/", 1)[-1]),
        kind="vm",
        size=str(hardware.get("vmSize") or "") if isinstance(hardware, dict) else "",
        power_state=_AZURE_POWER.get(power, "unknown"),
        created=parse_time(item.get("timeCreated")),
        tags=_string_tags(item.get("tags")),
        source=source,
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
            if not isinstance(instance, dict) or not isinstance(instance.get("InstanceId"), str):
                raise InventoryFormatError("an instance has no string InstanceId")
            tags = _aws_tags(instance.get("Tags"))
            placement = instance.get("Placement") or {}
            zone = str(placement.get("AvailabilityZone") or "")
            region = _AWS_REGION.match(zone)
            state = instance.get("State") or {}
            resources.append(
                Resource(
                    provider="aws",
                    account=owner,
                    region=region.group(1) if region else zone,
                    group="",
                    id=instance["InstanceId"],
                    name=tags.get("Name") or instance["InstanceId"],
                    kind="vm",
                    size=str(instance.get("InstanceType") or ""),
                    power_state=_AWS_POWER.get(str(state.get("Name") or ""), "unknown"),
                    created=parse_time(instance.get("LaunchTime")),
                    tags=tags,
                    source=source,
                )
            )
    return tuple(resources)


def _string_tags(raw: Any) -> dict[str, str]:
    # az prints `"tags": null` for an untagged VM.
    if not isinstance(raw, dict):
        return {}
    return {str(k): "" if v is None else str(v) for k, v in raw.items()}


def _aws_tags(raw: Any) -> dict[str, str]:
    if not isinstance(raw, list):
        return {}
    return {
        str(t["Key"]): str(t.get("Value") or "") for t in raw if isinstance(t, dict) and "Key" in t
    }


_EXCESS_FRACTION = re.compile(r"(\.\d{6})\d+")


def parse_time(value: Any) -> datetime | None:
    """ISO-8601 to aware UTC; None when absent or unparseable (age then unknown)."""
    if not isinstance(value, str) or not value:
        return None
    # Azure writes 7 fractional digits; datetime takes at most 6.
    text = _EXCESS_FRACTION.sub(r"\1", value.strip())
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)

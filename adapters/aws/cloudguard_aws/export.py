"""The AWS CLI's exports, read into `Resource` records.

- `aws ec2 describe-instances`: three shapes, the whole answer (an object with
  `Reservations`), and its `--query 'Reservations[].Instances[]'` (a flat list
  of instances) and `'Reservations[*].Instances[*]'` (a list of lists) forms;
- `aws resourcegroupstaggingapi get-resources`: an object with
  `ResourceTagMappingList`, every tagged resource of every service, each by
  its ARN (its kind read from the ARN, as Resource Explorer names types).

The live sweep and the reaper read boto3's answers with the same functions,
so the live and offline paths cannot disagree. Stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from cloudguard.cloud.exports import InventoryFormatError, interned, parse_time
from cloudguard.cloud.records import Resource
from cloudguard_aws import kinds

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

# us-east-1a -> us-east-1; us-west-2-lax-1a (a Local Zone) -> us-west-2.
_AWS_REGION = re.compile(r"^([a-z]{2}(?:-gov|-iso[a-z]*)?-[a-z]+-\d+)")


class DescribeInstancesExport:
    """`aws ec2 describe-instances` in any of its three shapes."""

    description = (
        "`aws ec2 describe-instances` output (an object with Reservations), or its "
        "`--query 'Reservations[].Instances[]'` form (a list of instances)"
    )
    entry_description = "an EC2 instance (no `InstanceId`)"

    def claims_entry(self, entry: Any) -> bool:
        if isinstance(entry, list):  # `Reservations[*].Instances[*]`: a list per reservation
            return True
        return isinstance(entry, dict) and "InstanceId" in entry and "id" not in entry

    def parse_entry(self, entry: Any, source: str) -> Iterator[Resource]:
        instances = entry if isinstance(entry, list) else [entry]
        for instance in instances:
            yield instance_resource(instance, "", source)

    def claims_document(self, document: Any) -> bool:
        return isinstance(document, dict) and "Reservations" in document

    def parse_document(self, document: Any, source: str) -> tuple[Resource, ...]:
        return instances_of(document, source)


def instances_of(document: Mapping[str, Any], source: str) -> tuple[Resource, ...]:
    """Every instance of a DescribeInstances answer (datetimes as ISO text, as the CLI prints)."""
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
            resources.append(instance_resource(instance, owner, source))
    return tuple(resources)


def instance_resource(instance: Any, owner: str, source: str) -> Resource:
    """One EC2 instance; `owner` is its reservation's OwnerId ("" when the
    `--query` form left the reservation out)."""
    if not isinstance(instance, dict) or not isinstance(instance.get("InstanceId"), str):
        raise InventoryFormatError("an instance has no string InstanceId")
    tags = _tags(instance.get("Tags"))
    placement = instance.get("Placement") or {}
    zone = str(placement.get("AvailabilityZone") or "")
    region = _AWS_REGION.match(zone)
    state = instance.get("State") or {}
    return Resource(
        provider="aws",
        account=interned(owner),
        region=interned(region.group(1) if region else zone),
        group="",
        id=instance["InstanceId"],
        name=tags.get("Name") or instance["InstanceId"],
        kind="vm",
        size=interned(instance.get("InstanceType")),
        power_state=_AWS_POWER.get(str(state.get("Name") or ""), "unknown"),
        created=parse_time(instance.get("LaunchTime")),
        tags=tags,
        source=source,
    )


def _tags(raw: Any) -> dict[str, str]:
    if not isinstance(raw, list):
        return {}
    return {
        interned(t["Key"]): interned(t.get("Value"))
        for t in raw
        if isinstance(t, dict) and "Key" in t
    }


def volume_resource(volume: dict[str, Any], region: str, account: str) -> Resource:
    """An EBS volume (a DescribeVolumes entry) as a `kind="disk"` record."""
    tags = {t["Key"]: t.get("Value", "") for t in volume.get("Tags", [])}
    return Resource(
        provider="aws",
        account=account,
        region=region,
        group="",
        id=volume["VolumeId"],
        name=tags.get("Name") or volume["VolumeId"],
        kind="disk",
        size=f"{volume.get('VolumeType', '')} {volume.get('Size', '?')} GiB".strip(),
        power_state="unknown",
        created=volume.get("CreateTime"),
        tags=tags,
        source=f"aws:{region}",
    )


def jsonable(value: Any) -> Any:
    """boto3's response with datetimes as ISO text, as `aws ec2 describe-instances` prints it."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    return value


class TaggingExport:
    """`aws resourcegroupstaggingapi get-resources`: `{"ResourceTagMappingList": [...]}`."""

    description = "`aws resourcegroupstaggingapi get-resources` output"
    entry_description = "a resource tag mapping (ResourceARN)"

    def claims_entry(self, entry: Any) -> bool:
        return False  # the CLI prints one object

    def parse_entry(self, entry: Any, source: str) -> Iterator[Resource]:
        raise InventoryFormatError("`get-resources` prints one object")

    def claims_document(self, document: Any) -> bool:
        return isinstance(document, dict) and "ResourceTagMappingList" in document

    def parse_document(self, document: Any, source: str) -> Iterator[Resource]:
        mappings = document["ResourceTagMappingList"]
        if not isinstance(mappings, list):
            raise InventoryFormatError("`ResourceTagMappingList` is not a list")
        if document.get("PaginationToken"):
            raise InventoryFormatError(
                "a page of a longer answer (PaginationToken is set): export every page "
                "(the CLI follows them unless --no-paginate or --max-items is given)"
            )
        for index, mapping in enumerate(mappings):
            if not isinstance(mapping, dict) or not isinstance(mapping.get("ResourceARN"), str):
                raise InventoryFormatError(f"entry {index} has no string ResourceARN")
            yield tagged_resource(mapping["ResourceARN"], mapping.get("Tags"), source)


def tagged_resource(
    arn: str, tags: Any, source: str, region: str = "", account: str = ""
) -> Resource:
    """A resource named by its ARN and tags (GetResources, a Resource Explorer search).

    EC2's own ids (`vol-...`, `snap-...`, `eipalloc-...`) are the resource's id, as EC2
    and Terraform name them; any other resource is its ARN. An ARN without a region or
    an account (`arn:aws:s3:::bucket`) takes the region and account it was listed in."""
    parts = arn.split(":", 5)
    service, arn_region, arn_account, rest = parts[2], parts[3], parts[4], parts[5]
    found_tags = _tags(tags)
    kind = kinds.kind_of(kinds.resource_type(arn))
    short = rest.rsplit("/", 1)[-1] if "/" in rest else rest.rsplit(":", 1)[-1]
    resource_id = short if service == "ec2" and "/" in rest else arn
    if kind == kinds.kind_of("elasticloadbalancing:loadbalancer/app"):
        short = rest.split("/")[2]  # loadbalancer/app/<name>/<id>: its name
    return Resource(
        provider="aws",
        account=interned(arn_account or account),
        region=interned(arn_region or region),
        group="",
        id=resource_id,
        name=found_tags.get("Name") or short,
        kind=kind,
        size="",
        power_state="unknown",
        created=None,  # the tagging API records no creation time
        tags=found_tags,
        source=source,
    )


def address_resource(address: dict[str, Any], region: str, account: str) -> Resource:
    """An Elastic IP (a DescribeAddresses entry) as a `kind="public-ip"` record."""
    tags = _tags(address.get("Tags"))
    allocation = str(address.get("AllocationId") or address.get("PublicIp") or "")
    return Resource(
        provider="aws",
        account=account,
        region=region,
        group="",
        id=allocation,
        name=tags.get("Name") or str(address.get("PublicIp") or allocation),
        kind=kinds.kind_of("ec2:elastic-ip"),
        size=str(address.get("Domain") or ""),
        power_state="unknown",
        created=None,
        tags=tags,
        source=f"aws:{region}",
    )

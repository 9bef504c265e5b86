"""The AWS kinds with one clear delete, beyond instances and volumes: read one live, delete it.

Each kind is read by its id, with its tags and what holds it (a delete of
something in use fails, or worse: the reaper must not try):

| kind | read | in use when | delete |
|---|---|---|---|
| snapshot | DescribeSnapshots | an AMI of the account's uses it (DescribeImages) | DeleteSnapshot |
| public-ip | DescribeAddresses | associated | ReleaseAddress |
| nic | DescribeNetworkInterfaces | attached, or in use | DeleteNetworkInterface |
| security-group | DescribeSecurityGroups | something uses it (1) | DeleteSecurityGroup |
| load-balancer | elbv2 DescribeLoadBalancers, DescribeTags | - | DeleteLoadBalancer |

(1) a network interface (an instance's too), or another group's inbound or outbound
rule naming it (DescribeSecurityGroups filtered on each).

A VPC's `default` security group (which AWS never deletes) and a load balancer
with deletion protection on are protected.

Each kind's reads end with the one that carries its tags (issue 32): what holds
it or protects it is read first. A tag changed after that last read and before
the delete is the only window left (one request's way back and the delete's way
out); an attachment or protection made after its own read EC2 and ELB refuse
the delete for (`InvalidParameterValue` for an interface in use,
`InvalidIPAddress.InUse`, `DependencyViolation`, `OperationNotPermitted`), and the
action is logged failed. Except one: an Elastic IP associated in a default VPC after
its read (the same read as its tags) ReleaseAddress disassociates and releases, as
AWS documents; that is the tag's window too.

Anything else is not reaped by cloudguard: `delete_command` says what a person
would run. boto3's clients are the reaper's (cloudguard_aws.reaper).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from cloudguard.cloud import kinds
from cloudguard.cloud.reaping import Live
from cloudguard.cloud.records import Resource
from cloudguard_aws.export import address_resource, jsonable, tagged_resource

LOAD_BALANCER_ARN = re.compile(
    r"^arn:aws[\w-]*:elasticloadbalancing:[a-z0-9-]+:\d{12}:loadbalancer/(app|net|gwy)/[^/]+/[0-9a-f]+$"
)
IDS = {
    kinds.SNAPSHOT: re.compile(r"^snap-[0-9a-f]{8,17}$"),
    kinds.PUBLIC_IP: re.compile(r"^eipalloc-[0-9a-f]{8,17}$"),
    kinds.NIC: re.compile(r"^eni-[0-9a-f]{8,17}$"),
    kinds.SECURITY_GROUP: re.compile(r"^sg-[0-9a-f]{8,17}$"),
    kinds.LOAD_BALANCER: LOAD_BALANCER_ARN,
}
NOT_FOUND = {
    "InvalidSnapshot.NotFound",
    "InvalidAllocationID.NotFound",
    "InvalidNetworkInterfaceID.NotFound",
    "InvalidGroup.NotFound",
    "LoadBalancerNotFound",
}
_ARN = "arn:aws:ec2:{region}:{account}:{type}/{id}"


def read(
    kind: str, clients: Callable[[str], Any], resource_id: str, region: str, account: str
) -> Live | None:
    """The resource now (None: gone); `clients(service)` gives a read client of its region."""
    return _READERS[kind](clients, resource_id, region, account)


def delete(kind: str, client: Callable[[str], Any], resource_id: str) -> None:
    """One delete request, through an acting client (one attempt)."""
    if kind == kinds.SNAPSHOT:
        client("ec2").delete_snapshot(SnapshotId=resource_id)
    elif kind == kinds.PUBLIC_IP:
        client("ec2").release_address(AllocationId=resource_id)
    elif kind == kinds.NIC:
        client("ec2").delete_network_interface(NetworkInterfaceId=resource_id)
    elif kind == kinds.SECURITY_GROUP:
        client("ec2").delete_security_group(GroupId=resource_id)
    else:
        client("elbv2").delete_load_balancer(LoadBalancerArn=resource_id)


def _ec2_resource(
    kind_type: str, resource_id: str, tags: Any, region: str, account: str
) -> Resource:
    arn = _ARN.format(region=region, account=account, type=kind_type, id=resource_id)
    return tagged_resource(arn, tags, f"aws:{region}", region, account)


def _snapshot(clients: Callable[[str], Any], sid: str, region: str, account: str) -> Live | None:
    ec2 = clients("ec2")
    # An AMI registered from it keeps it (DeleteSnapshot would fail InvalidSnapshot.InUse):
    # the account's own images, their block devices read here, before the snapshot itself
    # (its tags are the last read: module docstring).
    used_by = ", ".join(
        str(image.get("ImageId"))
        for page in ec2.get_paginator("describe_images").paginate(Owners=["self"])
        for image in page.get("Images", [])
        if any(
            (m.get("Ebs") or {}).get("SnapshotId") == sid
            for m in image.get("BlockDeviceMappings") or ()
        )
    )
    found = ec2.describe_snapshots(SnapshotIds=[sid]).get("Snapshots", [])
    snapshot = next((s for s in found if s.get("SnapshotId") == sid), None)
    if snapshot is None:
        return None
    resource = _ec2_resource("snapshot", sid, snapshot.get("Tags"), region, account)
    created = jsonable(snapshot.get("StartTime"))
    return Live(
        _with(resource, size=f"{snapshot.get('VolumeSize', '?')} GiB", created=created),
        attached_to=f"AMI {used_by}" if used_by else None,
    )


def _address(clients: Callable[[str], Any], aid: str, region: str, account: str) -> Live | None:
    found = clients("ec2").describe_addresses(AllocationIds=[aid]).get("Addresses", [])
    address = next((a for a in found if a.get("AllocationId") == aid), None)
    if address is None:
        return None
    holder = address.get("AssociationId") or address.get("NetworkInterfaceId")
    return Live(address_resource(address, region, account), attached_to=holder or None)


def _interface(clients: Callable[[str], Any], eni: str, region: str, account: str) -> Live | None:
    found = clients("ec2").describe_network_interfaces(NetworkInterfaceIds=[eni])
    interface = next(
        (n for n in found.get("NetworkInterfaces", []) if n.get("NetworkInterfaceId") == eni), None
    )
    if interface is None:
        return None
    resource = _ec2_resource("network-interface", eni, interface.get("TagSet"), region, account)
    attachment = interface.get("Attachment") or {}
    holder = attachment.get("InstanceId") or (
        f"status {interface.get('Status')}" if interface.get("Status") == "in-use" else None
    )
    return Live(resource, attached_to=holder)


def _group(clients: Callable[[str], Any], gid: str, region: str, account: str) -> Live | None:
    ec2 = clients("ec2")
    # Who holds it first (another group's rule that names it, the interfaces that use it:
    # an instance's too), the group and its tags last (module docstring).
    named_by = _rules_naming(ec2, gid)
    users = ec2.describe_network_interfaces(Filters=[{"Name": "group-id", "Values": [gid]}])
    holders = ", ".join(str(n["NetworkInterfaceId"]) for n in users.get("NetworkInterfaces", []))
    found = ec2.describe_security_groups(GroupIds=[gid]).get("SecurityGroups", [])
    group = next((g for g in found if g.get("GroupId") == gid), None)
    if group is None:
        return None
    resource = _ec2_resource("security-group", gid, group.get("Tags"), region, account)
    protections = (
        ("a VPC's default security group: AWS never deletes it",)
        if group.get("GroupName") == "default"
        else ()
    )
    held_by = ", ".join(h for h in (holders, named_by) if h)
    return Live(resource, protections=protections, attached_to=held_by or None)


def _rules_naming(ec2: Any, gid: str) -> str:
    """The other groups whose inbound or outbound rules name `gid`: DeleteSecurityGroup fails
    (DependencyViolation) while one does, so it is a skip that says which. A group's own rule
    naming itself does not hold it."""
    return ", ".join(
        f"a rule of {group.get('GroupId')} ({direction})"
        for direction, name in (
            ("inbound", "ip-permission.group-id"),
            ("outbound", "egress.ip-permission.group-id"),
        )
        for page in ec2.get_paginator("describe_security_groups").paginate(
            Filters=[{"Name": name, "Values": [gid]}]
        )
        for group in page.get("SecurityGroups", [])
        if group.get("GroupId") != gid
    )


def _balancer(clients: Callable[[str], Any], arn: str, region: str, account: str) -> Live | None:
    elbv2 = clients("elbv2")
    # Its deletion protection first (ELB enforces one set after this read), its tags last
    # (module docstring).
    attributes = elbv2.describe_load_balancer_attributes(LoadBalancerArn=arn).get("Attributes", [])
    protected = any(
        a.get("Key") == "deletion_protection.enabled" and a.get("Value") == "true"
        for a in attributes
    )
    found = elbv2.describe_load_balancers(LoadBalancerArns=[arn]).get("LoadBalancers", [])
    balancer = next((b for b in found if b.get("LoadBalancerArn") == arn), None)
    if balancer is None:
        return None
    described = elbv2.describe_tags(ResourceArns=[arn]).get("TagDescriptions", [])
    tags = next((d.get("Tags") for d in described if d.get("ResourceArn") == arn), None)
    resource = tagged_resource(arn, tags, f"aws:{region}", region, account)
    return Live(
        _with(resource, created=jsonable(balancer.get("CreatedTime"))),
        protections=("deletion protection is on",) if protected else (),
    )


def _with(resource: Resource, **changes: Any) -> Resource:
    from cloudguard.cloud.exports import parse_time

    if "created" in changes:
        changes["created"] = parse_time(changes["created"])
    return resource._replace(**changes)


_READERS: dict[str, Callable[[Callable[[str], Any], str, str, str], Live | None]] = {
    kinds.SNAPSHOT: _snapshot,
    kinds.PUBLIC_IP: _address,
    kinds.NIC: _interface,
    kinds.SECURITY_GROUP: _group,
    kinds.LOAD_BALANCER: _balancer,
}


def delete_command(resource: Resource) -> str | None:
    """What a person would run to delete a resource cloudguard does not reap on AWS."""
    region = f" --region {resource.region}" if resource.region else ""
    name = resource.id.rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    commands = {
        # Never --force (it deletes every object first): a bucket that holds objects must be
        # emptied deliberately, by a person who has looked at them; rb refuses one that does.
        kinds.BUCKET: f"aws s3 rb s3://{name}",
        kinds.KUBERNETES_CLUSTER: f"aws eks delete-cluster --name {name}{region}",
        kinds.DATABASE: (
            f"aws rds delete-db-instance --db-instance-identifier {name} "
            f"--final-db-snapshot-identifier {name}-final{region}"
        ),
        kinds.NAT_GATEWAY: f"aws ec2 delete-nat-gateway --nat-gateway-id {name}{region}",
        kinds.VIRTUAL_NETWORK: f"aws ec2 delete-vpc --vpc-id {name}{region}",
        kinds.SCALE_SET: (
            f"aws autoscaling delete-auto-scaling-group --auto-scaling-group-name {name} "
            f"--force-delete{region}"
        ),
        "sqs:queue": (
            f"aws sqs delete-queue --queue-url "
            f"https://sqs.{resource.region}.amazonaws.com/{resource.account}/{name}{region}"
        ),
        "sns:topic": f"aws sns delete-topic --topic-arn {resource.id}{region}",
        "elasticloadbalancing:loadbalancer": (
            f"aws elb delete-load-balancer --load-balancer-name {name}{region}"
        ),
    }
    return commands.get(resource.kind)

"""Attack `reap apply` on AWS between every pair of requests it makes (issue 32).

One item of a kind is planned (a plan of the audit of a leaked run, its item's id
swapped for a fresh resource of that kind). `requests_of` records the requests
apply makes for it, in order; `attacked` runs apply again on a fresh resource with a
change made by another client just before request `k` is sent (so after request
`k - 1` was answered). Every request goes through botocore's `Endpoint._send`,
which is wrapped here; the change's own requests are not counted.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
from aws_helpers import AMI, FAKE_KEYS, ec2
from aws_leaked_run import RUN, TAGS
from botocore.endpoint import Endpoint
from test_aws_reaper import cli, digest

LEAKED_BY = ("--leaked-by", f"ci-run={RUN}")
# What each kind's action is called on the wire (its last request, when sent).
ACTIONS = {
    "TerminateInstances",
    "StopInstances",
    "DeleteVolume",
    "DeleteSnapshot",
    "ReleaseAddress",
    "DeleteNetworkInterface",
    "DeleteSecurityGroup",
    "DeleteLoadBalancer",
}


def _tags_spec(kind: str) -> list[dict[str, Any]]:
    return [{"ResourceType": kind, "Tags": [{"Key": k, "Value": v} for k, v in TAGS.items()]}]


def elbv2(endpoint: str) -> Any:
    return boto3.client("elbv2", endpoint_url=endpoint, region_name="us-east-1", **FAKE_KEYS)


def subnets(endpoint: str) -> list[str]:
    return [s["SubnetId"] for s in ec2(endpoint).describe_subnets()["Subnets"][:2]]


def other_instance(endpoint: str) -> str:
    """Someone else's instance: untagged, never the fleet's."""
    answer = ec2(endpoint).run_instances(ImageId=AMI, MinCount=1, MaxCount=1)
    return str(answer["Instances"][0]["InstanceId"])


_COUNTER = iter(range(10**6))


def fresh(endpoint: str, kind: str) -> str:
    """A new resource of `kind`, tagged as the leaked run's."""
    client = ec2(endpoint)
    if kind == "vm":
        answer = client.run_instances(
            ImageId=AMI, MinCount=1, MaxCount=1, TagSpecifications=_tags_spec("instance")
        )
        return str(answer["Instances"][0]["InstanceId"])
    if kind in ("disk", "snapshot"):
        volume = client.create_volume(
            AvailabilityZone="us-east-1a", Size=8, TagSpecifications=_tags_spec("volume")
        )["VolumeId"]
        if kind == "disk":
            return str(volume)
        snapshot = client.create_snapshot(VolumeId=volume, TagSpecifications=_tags_spec("snapshot"))
        return str(snapshot["SnapshotId"])
    if kind == "public-ip":
        address = client.allocate_address(Domain="vpc", TagSpecifications=_tags_spec("elastic-ip"))
        return str(address["AllocationId"])
    if kind == "nic":
        interface = client.create_network_interface(
            SubnetId=subnets(endpoint)[0], TagSpecifications=_tags_spec("network-interface")
        )
        return str(interface["NetworkInterface"]["NetworkInterfaceId"])
    if kind == "security-group":
        vpc = client.describe_vpcs()["Vpcs"][0]["VpcId"]
        return str(
            client.create_security_group(
                GroupName=f"sg-{RUN}-{next(_COUNTER)}",
                Description="leaked",
                VpcId=vpc,
                TagSpecifications=_tags_spec("security-group"),
            )["GroupId"]
        )
    assert kind == "load-balancer", kind
    return balancer(endpoint, f"lb-{RUN}-{next(_COUNTER)}")


def balancer(endpoint: str, name: str) -> str:
    tags = [{"Key": k, "Value": v} for k, v in TAGS.items()]
    answer = elbv2(endpoint).create_load_balancer(Name=name, Subnets=subnets(endpoint), Tags=tags)
    return str(answer["LoadBalancers"][0]["LoadBalancerArn"])


def exists(endpoint: str, kind: str, rid: str) -> bool:
    """Still there, in its state before the action (an instance: neither stopping nor gone)."""
    client = ec2(endpoint)
    if kind == "vm":
        state = client.describe_instances(InstanceIds=[rid])["Reservations"][0]["Instances"][0]
        return state["State"]["Name"] in ("pending", "running")
    if kind == "load-balancer":
        found = elbv2(endpoint).describe_load_balancers()["LoadBalancers"]
        return any(b["LoadBalancerArn"] == rid for b in found)
    listing: dict[str, Callable[[], list[str]]] = {
        "disk": lambda: [v["VolumeId"] for v in client.describe_volumes()["Volumes"]],
        "snapshot": lambda: [
            s["SnapshotId"] for s in client.describe_snapshots(OwnerIds=["self"])["Snapshots"]
        ],
        "public-ip": lambda: [a["AllocationId"] for a in client.describe_addresses()["Addresses"]],
        "nic": lambda: [
            n["NetworkInterfaceId"]
            for n in client.describe_network_interfaces()["NetworkInterfaces"]
        ],
        "security-group": lambda: [
            g["GroupId"] for g in client.describe_security_groups()["SecurityGroups"]
        ],
    }
    return rid in listing[kind]()


# The changes: each (endpoint, kind, id) -> the id the plan's item now names a resource of
# (the same id, or for a re-created load balancer the new one's), None when not applicable.
def _keep_tag(endpoint: str, kind: str, rid: str) -> None:
    if kind == "load-balancer":
        elbv2(endpoint).add_tags(ResourceArns=[rid], Tags=[{"Key": "do-not-reap", "Value": ""}])
    else:
        ec2(endpoint).create_tags(Resources=[rid], Tags=[{"Key": "do-not-reap", "Value": ""}])


def _not_the_runs(endpoint: str, kind: str, rid: str) -> None:
    """Its run tag taken off: no longer the leaked run's (someone adopted it)."""
    if kind == "load-balancer":
        elbv2(endpoint).remove_tags(ResourceArns=[rid], TagKeys=["ci-run"])
    else:
        ec2(endpoint).delete_tags(Resources=[rid], Tags=[{"Key": "ci-run"}])


def _attach(endpoint: str, kind: str, rid: str) -> None:
    client = ec2(endpoint)
    if kind == "disk":
        client.attach_volume(VolumeId=rid, InstanceId=other_instance(endpoint), Device="/dev/sdf")
    elif kind == "snapshot":
        mapping = [{"DeviceName": "/dev/sda1", "Ebs": {"SnapshotId": rid}}]
        client.register_image(
            Name=f"uses-{rid}", RootDeviceName="/dev/sda1", BlockDeviceMappings=mapping
        )
    elif kind == "public-ip":
        client.associate_address(AllocationId=rid, InstanceId=other_instance(endpoint))
    elif kind == "nic":
        client.attach_network_interface(
            NetworkInterfaceId=rid, InstanceId=other_instance(endpoint), DeviceIndex=1
        )
    elif kind == "security-group":
        client.create_network_interface(SubnetId=subnets(endpoint)[0], Groups=[rid])
    else:
        raise AssertionError(kind)


def _associate_in_own_vpc(endpoint: str, kind: str, rid: str) -> None:
    """Associated with an instance in a VPC of its own: not the default VPC, where AWS's
    ReleaseAddress would disassociate it and release it (aws_delete_refusals)."""
    client = ec2(endpoint)
    vpc = client.create_vpc(CidrBlock="10.77.0.0/16")["Vpc"]["VpcId"]
    subnet = client.create_subnet(VpcId=vpc, CidrBlock="10.77.1.0/24")["Subnet"]["SubnetId"]
    answer = client.run_instances(ImageId=AMI, MinCount=1, MaxCount=1, SubnetId=subnet)
    client.associate_address(AllocationId=rid, InstanceId=answer["Instances"][0]["InstanceId"])


def _vpc_of_group(client: Any, group: str) -> str:
    return str(client.describe_security_groups(GroupIds=[group])["SecurityGroups"][0]["VpcId"])


def _named_by_a_rule(outbound: bool) -> Callable[[str, str, str], None]:
    """Someone else's group gets a rule (inbound or outbound) that names it."""

    def change(endpoint: str, kind: str, rid: str) -> None:
        client = ec2(endpoint)
        other = client.create_security_group(
            GroupName=f"names-{next(_COUNTER)}",
            Description="someone else's",
            VpcId=_vpc_of_group(client, rid),
        )["GroupId"]
        rule = [{"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443,
                 "UserIdGroupPairs": [{"GroupId": rid}]}]  # fmt: skip
        authorize = (
            client.authorize_security_group_egress
            if outbound
            else client.authorize_security_group_ingress
        )
        authorize(GroupId=other, IpPermissions=rule)

    return change


def _used_by_an_instance(endpoint: str, kind: str, rid: str) -> None:
    """Someone else's instance launched with it (its interface carries the group)."""
    client = ec2(endpoint)
    vpc = _vpc_of_group(client, rid)
    subnet = client.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["Subnets"][0]
    client.run_instances(
        ImageId=AMI, MinCount=1, MaxCount=1, SubnetId=subnet["SubnetId"], SecurityGroupIds=[rid]
    )


def _protect(endpoint: str, kind: str, rid: str) -> None:
    if kind == "vm":
        ec2(endpoint).modify_instance_attribute(
            InstanceId=rid, DisableApiTermination={"Value": True}
        )
    else:
        elbv2(endpoint).modify_load_balancer_attributes(
            LoadBalancerArn=rid,
            Attributes=[{"Key": "deletion_protection.enabled", "Value": "true"}],
        )


RECREATED: list[str] = []  # the ARNs of the load balancers `_recreate` made


def _recreate(endpoint: str, kind: str, rid: str) -> None:
    """Deleted, and another made with its name (a load balancer's ARN names it)."""
    name = rid.split("/")[-2]
    elbv2(endpoint).delete_load_balancer(LoadBalancerArn=rid)
    RECREATED.append(balancer(endpoint, name))


CHANGES: dict[str, tuple[Callable[[str, str, str], None], frozenset[str]]] = {
    "keep-tag": (
        _keep_tag,
        frozenset(
            {"vm", "disk", "snapshot", "public-ip", "nic", "security-group", "load-balancer"}
        ),
    ),
    "not-the-runs": (
        _not_the_runs,
        frozenset(
            {"vm", "disk", "snapshot", "public-ip", "nic", "security-group", "load-balancer"}
        ),
    ),
    # Not a snapshot: moto's RegisterImage makes a snapshot of its own and ignores the one
    # named (test_aws_reap_kinds tags moto's own instead, before the plan).
    "attached": (_attach, frozenset({"disk", "public-ip", "nic", "security-group"})),
    "attached-in-own-vpc": (_associate_in_own_vpc, frozenset({"public-ip"})),
    "named-by-an-inbound-rule": (_named_by_a_rule(outbound=False), frozenset({"security-group"})),
    "named-by-an-outbound-rule": (_named_by_a_rule(outbound=True), frozenset({"security-group"})),
    "used-by-an-instance": (_used_by_an_instance, frozenset({"security-group"})),
    "protected": (_protect, frozenset({"vm", "load-balancer"})),
    "re-created": (_recreate, frozenset({"load-balancer"})),
}


@dataclass
class Wire:
    """Every request botocore sends in this process, by operation, while `recording`."""

    sent: list[str] = field(default_factory=list)
    before: dict[int, Callable[[], None]] = field(default_factory=dict)
    _quiet: threading.local = field(default_factory=threading.local)

    @contextmanager
    def quiet(self) -> Iterator[None]:
        self._quiet.on = True
        try:
            yield
        finally:
            self._quiet.on = False

    def hook(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def send(endpoint: Endpoint, request: Any) -> Any:
            if getattr(self._quiet, "on", False):
                return original(endpoint, request)
            index = len(self.sent)
            if (change := self.before.pop(index, None)) is not None:
                with self.quiet():
                    change()
            self.sent.append(_operation(request))
            return original(endpoint, request)

        return send


def _operation(request: Any) -> str:
    body = request.body
    if isinstance(body, bytes):
        body = body.decode()
    found = urllib.parse.parse_qs(str(body or "")).get("Action")
    return found[0] if found else f"{request.method} {urllib.parse.urlsplit(request.url).path}"


def template(endpoint: str, tmp_path: Path) -> dict[str, Any]:
    """A plan of the audit of a leaked run (every kind, deleted), as JSON."""
    report, path = tmp_path / "audit.json", tmp_path / "plan.json"
    done = cli("audit", "--provider", "aws", "--region", "us-east-1", *live(endpoint),
               *evidence(tmp_path), *LEAKED_BY, "-f", "json", "-o", str(report))  # fmt: skip
    assert done.exit_code == 1, done.output
    done = cli("reap", "plan", str(report), "--verdict", "leaked", "--action", "delete",
               "--delete-data", "disk,snapshot", "--output", str(path))  # fmt: skip
    assert done.exit_code == 0, done.output
    return dict(json.loads(path.read_text()))


def one_item(document: dict[str, Any], kind: str, rid: str, path: Path) -> Path:
    """The plan with only its first item of `kind`, naming `rid` instead."""
    item = next(i for i in document["items"] if i["kind"] == kind)
    item = {**item, "id": rid, "name": rid.rsplit("/", 1)[-1], "dependent_of": ""}
    path.write_text(json.dumps({**document, "items": [item], "with_dependents": False}))
    return path


def live(endpoint: str) -> list[str]:
    return ["--credential", "fake", "--management-endpoint", endpoint]


def evidence(tmp_path: Path) -> list[str]:
    return ["--controller-home", str(tmp_path / "controller")]


def apply(endpoint: str, tmp_path: Path, path: Path) -> tuple[int, str, list[dict[str, Any]]]:
    log = tmp_path / f"reap-{next(_COUNTER)}.jsonl"  # tmp_path: the evidence's
    done = cli("reap", "apply", str(path), *live(endpoint), *evidence(tmp_path), *LEAKED_BY,
               "--log", str(log), "--yes", "--approve", digest(path))  # fmt: skip
    records = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return done.exit_code, done.output, records

"""The refusing proxy refuses what AWS refuses of a delete, and only that (aws_delete_refusals):
boto3 through the proxy, the state made in moto directly. What the every-request attack
(test_aws_reap_every_request.py) counts as "refused by AWS" is only as true as this."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from aws_every_request import elbv2, fresh, subnets
from aws_helpers import AMI, ec2
from aws_refusing_proxy import Refusals, refusing_proxy
from botocore.exceptions import ClientError
from named_checks import broken


@pytest.fixture
def proxy(endpoint: str) -> Iterator[tuple[str, Refusals]]:
    with refusing_proxy(endpoint) as found:
        yield found


def _instance(endpoint: str, subnet: str | None = None, groups: list[str] | None = None) -> str:
    options: dict[str, Any] = {"SubnetId": subnet} if subnet else {}
    if groups:
        options["SecurityGroupIds"] = groups
    answer = ec2(endpoint).run_instances(ImageId=AMI, MinCount=1, MaxCount=1, **options)
    return str(answer["Instances"][0]["InstanceId"])


def _own_vpc_subnet(endpoint: str) -> str:
    client = ec2(endpoint)
    vpc = client.create_vpc(CidrBlock="10.77.0.0/16")["Vpc"]["VpcId"]
    return str(client.create_subnet(VpcId=vpc, CidrBlock="10.77.1.0/24")["Subnet"]["SubnetId"])


def _group_in(endpoint: str, vpc: str) -> str:
    return str(
        ec2(endpoint).create_security_group(
            GroupName=f"other-{vpc}-{id(object())}", Description="other", VpcId=vpc
        )["GroupId"]
    )


def _vpc_of_group(endpoint: str, group: str) -> str:
    return str(
        ec2(endpoint).describe_security_groups(GroupIds=[group])["SecurityGroups"][0]["VpcId"]
    )


def _rule(group: str) -> list[dict[str, Any]]:
    return [{"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443,
             "UserIdGroupPairs": [{"GroupId": group}]}]  # fmt: skip


# kind, how it is held (made in moto), the code AWS answers its delete with (None: deleted)
Hold = Callable[[str, str], None]
CASES: dict[str, tuple[str, Hold, str | None]] = {
    "an interface attached": ("nic", lambda e, r: ec2(e).attach_network_interface(
        NetworkInterfaceId=r, InstanceId=_instance(e), DeviceIndex=1), "InvalidParameterValue"),
    "an interface alone": ("nic", lambda e, r: None, None),
    "an address associated in its own VPC": ("public-ip", lambda e, r: ec2(e).associate_address(
        AllocationId=r, InstanceId=_instance(e, _own_vpc_subnet(e))), "InvalidIPAddress.InUse"),
    # AWS: "[Default VPC] Releasing an Elastic IP address automatically disassociates it"
    "an address associated in the default VPC": ("public-ip", lambda e, r: ec2(e).associate_address(
        AllocationId=r, InstanceId=_instance(e)), None),
    "a group an interface uses": ("security-group", lambda e, r: ec2(e).create_network_interface(
        SubnetId=subnets(e)[0], Groups=[r]), "DependencyViolation"),
    "a group an instance uses": ("security-group", lambda e, r: _instance(
        e, subnets(e)[0], [r]) and None, "DependencyViolation"),
    "a group another's inbound rule names": ("security-group", lambda e, r: ec2(e)
        .authorize_security_group_ingress(GroupId=_group_in(e, _vpc_of_group(e, r)),
                                          IpPermissions=_rule(r)), "DependencyViolation"),
    "a group another's outbound rule names": ("security-group", lambda e, r: ec2(e)
        .authorize_security_group_egress(GroupId=_group_in(e, _vpc_of_group(e, r)),
                                         IpPermissions=_rule(r)), "DependencyViolation"),
    "a group whose own rule names itself": ("security-group", lambda e, r: ec2(e)
        .authorize_security_group_ingress(GroupId=r, IpPermissions=_rule(r)), None),
    "a load balancer with deletion protection": ("load-balancer", lambda e, r: elbv2(e)
        .modify_load_balancer_attributes(LoadBalancerArn=r, Attributes=[
            {"Key": "deletion_protection.enabled", "Value": "true"}]), "OperationNotPermitted"),
    "a load balancer without": ("load-balancer", lambda e, r: None, None),
}  # fmt: skip
_DELETES: dict[str, Callable[[str, str], Any]] = {
    "nic": lambda e, r: ec2(e).delete_network_interface(NetworkInterfaceId=r),
    "public-ip": lambda e, r: ec2(e).release_address(AllocationId=r),
    "security-group": lambda e, r: ec2(e).delete_security_group(GroupId=r),
    "load-balancer": lambda e, r: elbv2(e).delete_load_balancer(LoadBalancerArn=r),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_proxy_refuses_a_delete_as_aws_does(
    endpoint: str, proxy: tuple[str, Refusals], case: str
) -> None:
    kind, hold, expected = CASES[case]
    rid = fresh(endpoint, kind)
    hold(endpoint, rid)
    via, refusals = proxy

    try:
        _DELETES[kind](via, rid)
        answered = None
    except ClientError as error:
        answered = error.response["Error"]["Code"]

    assert answered == expected, broken(
        "the-proxy-refuses-as-aws-does", f"{case}: AWS answers {expected}, the proxy {answered}"
    )
    assert sum(refusals.refused.values()) == (1 if expected else 0)

"""What AWS refuses of a delete that moto carries out, decided from moto's own state and
answered with AWS's error documents (the refusing proxy, aws_refusing_proxy.py, sends them).

moto deletes an attached network interface, releases an associated Elastic IP wherever it
is, and deletes a security group something uses and a load balancer with deletion
protection on. AWS refuses each at the delete itself, atomically: what the reaper's reads
can no longer see (made after its read), AWS must refuse (issue 32).

- DeleteNetworkInterface, while it is attached (or its status is `in-use`):
  `InvalidParameterValue`, "Network interface 'eni-…' is currently in use.";
- ReleaseAddress, while it is associated in a nondefault VPC: `InvalidIPAddress.InUse`;
- DeleteSecurityGroup, while a network interface uses it or another group's rule
  (inbound or outbound) names it: `DependencyViolation`, "resource sg-… has a dependent
  object";
- elbv2 DeleteLoadBalancer, while `deletion_protection.enabled` is true:
  `OperationNotPermitted`, "Load balancer '…' cannot be deleted because deletion
  protection is enabled".

Sources: the EC2 API reference of ReleaseAddress ("[Nondefault VPC] You must disassociate
the Elastic IP address before you can release it. Otherwise, Amazon EC2 returns an error
(InvalidIPAddress.InUse)"; "[Default VPC] Releasing an Elastic IP address automatically
disassociates it": forwarded, moto does just that); DeleteNetworkInterface's code and message
as AWS answers them (cloud-nuke #431, #1132: `InvalidParameterValue`, not the
`InvalidNetworkInterface.InUse` of RunInstances and AttachNetworkInterface); the
DependencyViolation and OperationNotPermitted documents as AWS's answers quote them
(terraform-provider-aws #1671, aws-nuke #1240). A group's rule naming the group itself does
not hold it. moto itself refuses DeleteVolume of an attached volume (`VolumeInUse`) and
TerminateInstances / StopInstances of a protected instance (`OperationNotPermitted`): those
are forwarded.

The state is read just before the delete is forwarded, as the same caller (moto checks no
signature); a change between that read and the forward is not modelled (the attacks make
theirs before the request is sent). Stdlib only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from xml.etree import ElementTree
from xml.sax.saxutils import escape

Ask = Callable[[dict[str, str]], bytes]  # a query to moto as the request's caller -> its answer
Refused = tuple[str, str]  # (code, message)

EC2 = "2016-11-15"
ELBV2 = "2015-12-01"
EC2_ERROR = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>{code}</Code>'
    "<Message>{message}</Message></Error></Errors>"
    "<RequestID>7a62c49f-347e-4fc4-9331-6e8eEXAMPLE</RequestID></Response>"
)
ELBV2_ERROR = (
    '<ErrorResponse xmlns="http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/">'
    "<Error><Type>Sender</Type><Code>{code}</Code><Message>{message}</Message></Error>"
    "<RequestId>a2c5d3b1-7c4e-11e8-8c4a-4f1b5EXAMPLE</RequestId></ErrorResponse>"
)


def refusal(form: Mapping[str, str], ask: Ask) -> tuple[str, bytes] | None:
    """AWS's answer to this request when AWS refuses it (code, document); None: forward it."""
    action = form.get("Action", "")
    check = _CHECKS.get(action)
    found = check(form, ask) if check is not None else None
    if found is None:
        return None
    code, message = found
    template = ELBV2_ERROR if action == "DeleteLoadBalancer" else EC2_ERROR
    return code, template.format(code=code, message=escape(message)).encode()


def _interface(form: Mapping[str, str], ask: Ask) -> Refused | None:
    eni = form.get("NetworkInterfaceId", "")
    answer = ask(
        {"Action": "DescribeNetworkInterfaces", "Version": EC2, "NetworkInterfaceId.1": eni}
    )
    if _values(answer, "attachmentId") or "in-use" in _values(answer, "status"):
        return "InvalidParameterValue", f"Network interface '{eni}' is currently in use."
    return None


def _address(form: Mapping[str, str], ask: Ask) -> Refused | None:
    allocation = form.get("AllocationId", "")
    answer = ask({"Action": "DescribeAddresses", "Version": EC2, "AllocationId.1": allocation})
    if not _values(answer, "associationId"):
        return None
    vpc = _vpc_of(answer, ask)
    default = vpc is not None and _values(
        ask({"Action": "DescribeVpcs", "Version": EC2, "VpcId.1": vpc}), "isDefault"
    ) == ["true"]
    if default:  # AWS disassociates it and releases it, as moto does
        return None
    return "InvalidIPAddress.InUse", f"Address {allocation} is in use."


def _vpc_of(address: bytes, ask: Ask) -> str | None:
    """The VPC an associated address is used in (its interface's, else its instance's)."""
    if interface := _values(address, "networkInterfaceId"):
        query = {"Action": "DescribeNetworkInterfaces", "NetworkInterfaceId.1": interface[0]}
    elif instance := _values(address, "instanceId"):
        query = {"Action": "DescribeInstances", "InstanceId.1": instance[0]}
    else:
        return None
    found = _values(ask({**query, "Version": EC2}), "vpcId")
    return found[0] if found else None


def _group(form: Mapping[str, str], ask: Ask) -> Refused | None:
    group = form.get("GroupId", "")
    users = ask({"Action": "DescribeNetworkInterfaces", "Version": EC2,
                 "Filter.1.Name": "group-id", "Filter.1.Value.1": group})  # fmt: skip
    naming = [
        other
        for side in ("ip-permission.group-id", "egress.ip-permission.group-id")
        for other in _group_ids(
            ask(
                {
                    "Action": "DescribeSecurityGroups",
                    "Version": EC2,
                    "Filter.1.Name": side,
                    "Filter.1.Value.1": group,
                }
            )
        )
        if other != group
    ]
    if _values(users, "networkInterfaceId") or naming:
        return "DependencyViolation", f"resource {group} has a dependent object"
    return None


def _balancer(form: Mapping[str, str], ask: Ask) -> Refused | None:
    arn = form.get("LoadBalancerArn")
    if not arn:  # a classic load balancer's (LoadBalancerName): not this API
        return None
    answer = ask({"Action": "DescribeLoadBalancerAttributes", "Version": ELBV2,
                  "LoadBalancerArn": arn})  # fmt: skip
    attributes = [
        {_local(part.tag): part.text for part in member}
        for member in _parse(answer).iter()
        if _local(member.tag) == "member"
    ]
    if {"Key": "deletion_protection.enabled", "Value": "true"} in attributes:
        return (
            "OperationNotPermitted",
            f"Load balancer '{arn}' cannot be deleted because deletion protection is enabled",
        )
    return None


_CHECKS: dict[str, Callable[[Mapping[str, str], Ask], Refused | None]] = {
    "DeleteNetworkInterface": _interface,
    "ReleaseAddress": _address,
    "DeleteSecurityGroup": _group,
    "DeleteLoadBalancer": _balancer,
}


def _parse(answer: bytes) -> ElementTree.Element:
    try:
        return ElementTree.fromstring(answer)
    except ElementTree.ParseError:
        return ElementTree.Element("unreadable")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _values(answer: bytes, name: str) -> list[str]:
    """The text of every element of that (local) name, at any depth."""
    return [e.text or "" for e in _parse(answer).iter() if _local(e.tag) == name]


def _group_ids(answer: bytes) -> list[str]:
    """The ids of the groups a DescribeSecurityGroups answer lists (not those its rules name)."""
    return [
        part.text or ""
        for info in _parse(answer).iter()
        if _local(info.tag) == "securityGroupInfo"
        for item in info
        for part in item
        if _local(part.tag) == "groupId"
    ]

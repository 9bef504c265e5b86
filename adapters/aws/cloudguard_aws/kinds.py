"""AWS's kinds: resource types by ARN, the shared words for them, and what each bills idle.

A resource's type is named as AWS Resource Explorer names it, `service:type`
(`ec2:instance`, `s3:bucket`, `rds:db`), read from its ARN. Where clouds share
the idea the kind is the shared word (an EC2 instance is a `vm`, an EBS volume
a `disk`); any other type is a kind of its own (`sqs:queue`). Billing is stated
only where it is known; a kind missing from `BILLING` is billed *unknown*.
Stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from cloudguard.cloud import kinds
from cloudguard.cloud.kinds import Billing, bills, free

# service:type -> the shared kind.
SHARED: Mapping[str, str] = MappingProxyType(
    {
        "ec2:instance": kinds.VM,
        "ec2:volume": kinds.DISK,
        "ec2:snapshot": kinds.SNAPSHOT,
        "ec2:elastic-ip": kinds.PUBLIC_IP,
        "ec2:network-interface": kinds.NIC,
        "ec2:security-group": kinds.SECURITY_GROUP,
        "ec2:natgateway": kinds.NAT_GATEWAY,
        "ec2:vpc": kinds.VIRTUAL_NETWORK,
        # Application, network and gateway load balancers (elbv2); a classic one keeps its
        # own type, `elasticloadbalancing:loadbalancer`.
        "elasticloadbalancing:loadbalancer/app": kinds.LOAD_BALANCER,
        "elasticloadbalancing:loadbalancer/net": kinds.LOAD_BALANCER,
        "elasticloadbalancing:loadbalancer/gwy": kinds.LOAD_BALANCER,
        "s3:bucket": kinds.BUCKET,
        "eks:cluster": kinds.KUBERNETES_CLUSTER,
        "rds:db": kinds.DATABASE,
        "autoscaling:autoscalinggroup": kinds.SCALE_SET,
    }
)
# Services whose ARN names a resource with no type in it (arn:aws:s3:::bucket): its type.
_UNTYPED = {"s3": "bucket", "sqs": "queue", "sns": "topic"}


def resource_type(arn: str) -> str:
    """`service:type` of an ARN: `arn:aws:ec2:us-east-1:123:volume/vol-1` -> `ec2:volume`,
    `arn:aws:rds:us-east-1:123:db:main` -> `rds:db`, `arn:aws:s3:::bucket` -> `s3:bucket`,
    an application load balancer -> `elasticloadbalancing:loadbalancer/app`."""
    parts = arn.split(":", 5)
    if len(parts) < 6 or parts[0] != "arn":
        return ""
    service, resource = parts[2], parts[5]
    balancer = re.match(r"^loadbalancer/(app|net|gwy)/", resource)
    if service == "elasticloadbalancing" and balancer:  # as Resource Explorer types them
        return f"elasticloadbalancing:loadbalancer/{balancer[1]}"
    for separator in ("/", ":"):
        if separator in resource:
            return f"{service}:{resource.split(separator, 1)[0]}".casefold()
    return f"{service}:{_UNTYPED.get(service, resource)}".casefold()


def kind_of(resource_type_name: str) -> str:
    folded = resource_type_name.casefold()
    return SHARED.get(folded, folded)


BILLING: Mapping[str, Billing] = MappingProxyType(
    {
        kinds.DISK: bills("an EBS volume bills its storage while it exists, attached or not"),
        kinds.SNAPSHOT: bills("a snapshot bills its storage while it exists"),
        kinds.PUBLIC_IP: bills(
            "a public IPv4 address bills by the hour while it exists, attached or not"
        ),
        kinds.NAT_GATEWAY: bills("a NAT gateway bills by the hour and for data processed"),
        kinds.LOAD_BALANCER: bills("a load balancer bills by the hour and its capacity units"),
        kinds.BUCKET: bills("a bucket bills for what it stores and serves (usage, not hours)"),
        kinds.KUBERNETES_CLUSTER: bills(
            "an EKS cluster's control plane bills by the hour; its nodes bill as instances"
        ),
        kinds.DATABASE: bills("a DB instance bills by the hour while available; storage always"),
        kinds.SCALE_SET: bills("an Auto Scaling group bills its instances"),
        kinds.NIC: free("a network interface bills nothing by itself"),
        kinds.SECURITY_GROUP: free("a security group bills nothing"),
        kinds.VIRTUAL_NETWORK: free("a VPC bills nothing by itself"),
    }
)

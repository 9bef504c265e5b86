"""A test run that provisioned AWS infrastructure and left it all behind, in moto.

Everything tagged with the run's id: an instance with its root volume, another
volume and a snapshot of it, an Elastic IP, a network interface, a security
group, an application load balancer and an S3 bucket. `--leaked-by ci-run=<RUN>`
must find every one of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import boto3
from aws_helpers import AMI, FAKE_KEYS, ec2

RUN = "ci-run-77"
TAGS = {"ci-run": RUN, "task-id": "cloud-noenv-c7"}


def _spec(kind: str) -> list[dict[str, object]]:
    return [{"ResourceType": kind, "Tags": [{"Key": k, "Value": v} for k, v in TAGS.items()]}]


@dataclass
class AwsLeakedRun:
    instance: str
    volumes: list[str]
    snapshot: str
    address: str
    interface: str
    group: str
    balancer: str
    bucket: str

    @property
    def kinds(self) -> dict[str, str]:
        """id -> kind of everything the run left."""
        return {
            self.instance: "vm",
            **dict.fromkeys(self.volumes, "disk"),
            self.snapshot: "snapshot",
            self.address: "public-ip",
            self.interface: "nic",
            self.group: "security-group",
            self.balancer: "load-balancer",
            f"arn:aws:s3:::{self.bucket}": "bucket",
        }


def leaked_run(endpoint: str, region: str = "us-east-1") -> AwsLeakedRun:
    client = ec2(endpoint, region)
    tagged = [{"Key": k, "Value": v} for k, v in TAGS.items()]
    instance = client.run_instances(
        ImageId=AMI, MinCount=1, MaxCount=1, InstanceType="m5.large",
        TagSpecifications=_spec("instance") + _spec("volume"),
    )["Instances"][0]  # fmt: skip
    root = [m["Ebs"]["VolumeId"] for m in instance.get("BlockDeviceMappings", [])]
    extra = client.create_volume(
        AvailabilityZone=f"{region}a", Size=100, VolumeType="gp3", TagSpecifications=_spec("volume")
    )["VolumeId"]
    snapshot = client.create_snapshot(VolumeId=extra, TagSpecifications=_spec("snapshot"))
    address = client.allocate_address(Domain="vpc", TagSpecifications=_spec("elastic-ip"))
    vpc = client.describe_vpcs()["Vpcs"][0]["VpcId"]
    subnets = [s["SubnetId"] for s in client.describe_subnets()["Subnets"][:2]]
    group = client.create_security_group(
        GroupName=f"sg-{RUN}",
        Description="leaked",
        VpcId=vpc,
        TagSpecifications=_spec("security-group"),
    )["GroupId"]
    interface = client.create_network_interface(
        SubnetId=subnets[0], TagSpecifications=_spec("network-interface")
    )["NetworkInterface"]["NetworkInterfaceId"]
    options = {"endpoint_url": endpoint, "region_name": region, **FAKE_KEYS}
    balancer = boto3.client("elbv2", **options).create_load_balancer(
        Name=f"lb-{RUN}", Subnets=subnets, Tags=tagged
    )["LoadBalancers"][0]["LoadBalancerArn"]
    s3 = boto3.client("s3", **options)
    bucket = f"bucket-{RUN}"
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": tagged})
    return AwsLeakedRun(
        instance=instance["InstanceId"],
        volumes=[*root, extra],
        snapshot=snapshot["SnapshotId"],
        address=address["AllocationId"],
        interface=interface,
        group=group,
        balancer=balancer,
        bucket=bucket,
    )

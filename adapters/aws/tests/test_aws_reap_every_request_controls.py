"""Negative controls for the AWS reaper's bounds in time (issue 32), in a copy of the adapter
(harness: tests/cloudguard_mutants.py):

- each kind's reads end with the one that carries its tags: put that read first again (as
  it was), and its kind's every-request attack must find the wrong action;
- each read attempt's timeouts are the item budget: take that away (botocore's 60 s), and
  a held read must outlast the budget;
- the plan says how many objects a bucket holds: drop the count (in the core's planner),
  and the plan must fall back to "unknown"."""

from __future__ import annotations

from pathlib import Path

import cloudguard_aws
import pytest
from cloudguard_mutants import AWS_SDKS, Mutation, assert_turns_red

AWS = Path(cloudguard_aws.__file__).resolve().parent
ATTACK = (
    "adapters/aws/tests/test_aws_reap_every_request.py::"
    "test_a_change_before_any_request_is_never_acted_on"
)
CHECK = "never-acted-on-after-a-change"
TIMEOUTS = (
    "adapters/aws/tests/test_aws_reap_budget_timeouts.py::"
    "test_an_attempt_started_inside_the_budget_ends_inside_it"
)
_SNAPSHOT_READ = '    found = ec2.describe_snapshots(SnapshotIds=[sid]).get("Snapshots", [])\n'
_USERS = (
    '    users = ec2.describe_network_interfaces(Filters=[{"Name": "group-id", "Values": [gid]}])\n'
    '    holders = ", ".join(str(n["NetworkInterfaceId"]) for n in users.get("NetworkInterfaces", []))\n'  # noqa: E501
)
_PROTECTION = (
    '    attributes = elbv2.describe_load_balancer_attributes(LoadBalancerArn=arn).get("Attributes", [])\n'  # noqa: E501
    "    protected = any(\n"
    '        a.get("Key") == "deletion_protection.enabled" and a.get("Value") == "true"\n'
    "        for a in attributes\n"
    "    )\n"
)

MUTATIONS = [
    Mutation(
        name="an instance's tags read before its protection",
        module="reaper.py",
        original=(
            "                protections = self._instance_protection(ec2, item.id)\n"
            "                answer = ec2.describe_instances(InstanceIds=[item.id])\n"
        ),
        broken=(
            "                answer = ec2.describe_instances(InstanceIds=[item.id])\n"
            "                protections = self._instance_protection(ec2, item.id)\n"
        ),
        tests=(f"{ATTACK}[vm]",),
        check=CHECK,
        package=AWS,
    ),
    Mutation(
        name="a snapshot's tags read before the images that use it",
        module="reap_kinds.py",
        original=_SNAPSHOT_READ + "    snapshot = next(",
        broken="    snapshot = next(",
        also=(
            (
                "reap_kinds.py",
                '    ec2 = clients("ec2")\n    # An AMI registered',
                '    ec2 = clients("ec2")\n' + _SNAPSHOT_READ + "    # An AMI registered",
            ),
        ),
        tests=(f"{ATTACK}[snapshot]",),
        check=CHECK,
        package=AWS,
    ),
    Mutation(
        name="a security group's tags read before the interfaces that use it",
        module="reap_kinds.py",
        original=_USERS + "    found = ec2.describe_security_groups(",
        broken="    found = ec2.describe_security_groups(",
        also=(
            (
                "reap_kinds.py",
                '    resource = _ec2_resource("security-group"',
                _USERS + '    resource = _ec2_resource("security-group"',
            ),
        ),
        tests=(f"{ATTACK}[security-group]",),
        check=CHECK,
        package=AWS,
    ),
    Mutation(
        name="a load balancer's tags read before its deletion protection",
        module="reap_kinds.py",
        original=_PROTECTION + "    found = elbv2.describe_load_balancers(",
        broken="    found = elbv2.describe_load_balancers(",
        also=(
            (
                "reap_kinds.py",
                "    return Live(\n        _with(resource, created=jsonable(balancer",
                _PROTECTION + "    return Live(\n        _with(resource, created=jsonable(balancer",
            ),
        ),
        tests=(f"{ATTACK}[load-balancer]",),
        check=CHECK,
        package=AWS,
    ),
    Mutation(
        name="a read attempt's timeouts not capped by the item budget",
        module="reaper.py",
        original="            timeout = self._budget.seconds\n",
        broken="            timeout = None\n",
        tests=(f"{TIMEOUTS}[DescribeInstances]",),
        check="no-aws-attempt-outlasts-the-item-budget",
        package=AWS,
    ),
    Mutation(
        name="the account's read (STS) not capped by the item budget",
        module="reaper.py",
        original='"sts", item.region, self._budget.seconds)',
        broken='"sts", item.region)',
        tests=(f"{TIMEOUTS}[GetCallerIdentity]",),
        check="no-aws-attempt-outlasts-the-item-budget",
        package=AWS,
    ),
    Mutation(
        name="a bucket's object count not said in the plan",
        module="reap/planning.py",
        original='counted = resource.size if resource.size.endswith(" objects") else ""',
        broken='counted = ""',
        tests=(
            "adapters/aws/tests/test_aws_bucket_contents.py::"
            "test_the_plan_says_how_many_objects_a_bucket_holds[1000-3 objects]",
        ),
        check="the-plan-says-what-a-bucket-holds",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_a_bound_in_time_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS, AWS_SDKS)

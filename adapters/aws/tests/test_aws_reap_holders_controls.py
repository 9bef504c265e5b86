"""Negative controls for what holds an AWS resource at the moment of its action (issue 32), in
a copy of the adapter (harness: tests/cloudguard_mutants.py):

- a security group's read asks which other groups' inbound and outbound rules name it:
  drop either, and the every-request attack finds a group named by such a rule before
  its read acted on;
- AWS's refusal of an action (an interface attached after its read, which the refusing
  proxy answers as AWS does) is logged failed, naming AWS's code: take the refusal for
  done, and the attack finds a refused action logged `done`.

A module of its own: the harness's one run of every test a module names, unbroken, stays
two attacks long (test_aws_reap_every_request_controls.py names five)."""

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

MUTATIONS = [
    Mutation(
        name="a security group's inbound rules that name it not read",
        module="reap_kinds.py",
        original='            ("inbound", "ip-permission.group-id"),\n',
        broken="",
        tests=(f"{ATTACK}[security-group]",),
        check=CHECK,
        package=AWS,
    ),
    Mutation(
        name="a security group's outbound rules that name it not read",
        module="reap_kinds.py",
        original='            ("outbound", "egress.ip-permission.group-id"),\n',
        broken="",
        tests=(f"{ATTACK}[security-group]",),
        check=CHECK,
        package=AWS,
    ),
    Mutation(
        name="AWS's refusal of an action taken for done",
        module="reaper.py",
        original=(
            "        except (ClientError, BotoCoreError) as error:\n"
            '            raise ActionError(source, f"{action} failed: {describe_error(error)}")'
        ),
        broken=(
            "        except ClientError:\n"
            "            return  # the refusal read as done\n"
            "        except BotoCoreError as error:\n"
            '            raise ActionError(source, f"{action} failed: {describe_error(error)}")'
        ),
        tests=(f"{ATTACK}[nic]",),
        check="an-aws-refusal-is-logged-failed",
        package=AWS,
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_what_holds_a_resource_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS, AWS_SDKS)

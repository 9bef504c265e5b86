"""Negative controls: break re-verification on purpose; the named tests must go red, for the
right reason (harness: tests/cloudguard_mutants.py).

Each control mutates `reap/verify.py` or `reap/engine.py` in a copy of the
package: a safety check whose tests stay green when it is broken is not tested.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cloudguard_mutants import Mutation, assert_green_unmutated, assert_turns_red

AZURE = "adapters/azure/tests/test_azure_reaper.py"
AWS = "adapters/aws/tests/test_aws_reaper.py"
AZURE_SKIP = f"{AZURE}::test_a_vm_that_changed_since_the_plan_is_skipped_and_left_alone"


RECORD_APPEARS = "tests/reap/test_reap_apply.py::test_a_record_that_appears_mid_run_stops_that_item"

MUTATIONS = [
    Mutation(
        name="protection tag ignored",
        module="reap/verify.py",
        original="if (protected := protection_tag(current.tags)) is not None:",
        broken="if (protected := None) is not None:",
        tests=(
            f"{AZURE_SKIP}[protected]",
            f"{AZURE_SKIP}[protected-cloudguard]",
            f"{AWS}::test_a_protection_tag_added_after_the_plan_skips_the_instance[do-not-reap]",
            f"{AWS}::test_a_protection_tag_added_after_the_plan_skips_the_instance[Cloudguard-Protect]",
        ),
        reason="was acted on",
    ),
    Mutation(
        name="tag comparison always passes",
        module="reap/verify.py",
        original="    if before == after:\n",
        broken="    if True:\n",
        tests=(f"{AZURE_SKIP}[task-retagged]", f"{AZURE_SKIP}[generation-changed]"),
        reason="was acted on",
    ),
    Mutation(
        name="controller record never seen",
        module="reap/verify.py",
        original="if t is not None and t in controller_tasks",
        broken="if t is not None and False",
        tests=(f"{AZURE_SKIP}[record-appeared]", RECORD_APPEARS),
        # Each named test's own message (the harness reads each one's, never the pooled output).
        reason={
            f"{AZURE_SKIP}[record-appeared]": "was acted on (record-appeared)",
            RECORD_APPEARS: "the item whose record appeared was not skipped",
        },
    ),
    Mutation(
        name="unknown tags read as no protection",
        module="reap/verify.py",
        original="    if not current.tags:\n",
        broken="    if False:\n",
        tests=(f"{AZURE_SKIP}[tags-unreadable]",),
        reason="expected skip 'tags-unreadable'",
    ),
    Mutation(
        name="a vanished resource is not noticed",
        module="reap/verify.py",
        original='    if current is None or current.power_state == "terminated":\n',
        broken="    if False:\n",
        tests=(
            f"{AZURE_SKIP}[gone]",
            f"{AWS}::test_an_instance_terminated_since_the_plan_is_gone_not_failed",
        ),
        reason="expected skip 'gone'",
    ),
    Mutation(
        name="evidence read only once",
        module="reap/engine.py",
        original="        tasks = controller_tasks()\n",
        broken="        tasks = frozenset()\n",
        tests=(f"{AZURE_SKIP}[record-appeared]", RECORD_APPEARS),
        # Each named test's own message (the harness reads each one's, never the pooled output).
        reason={
            f"{AZURE_SKIP}[record-appeared]": "was acted on (record-appeared)",
            RECORD_APPEARS: "the item whose record appeared was not skipped",
        },
    ),
    Mutation(
        name="dry run acts",
        module="reap/engine.py",
        original="    if not execute:\n",
        broken="    if False:\n",
        tests=(
            f"{AZURE}::test_a_dry_run_re_reads_the_vm_and_acts_on_nothing",
            f"{AWS}::test_a_dry_run_stops_nothing",
        ),
        reason={
            f"{AZURE}::test_a_dry_run_re_reads_the_vm_and_acts_on_nothing": "a dry run sent a POST",
            f"{AWS}::test_a_dry_run_stops_nothing": "a dry run stopped it",
        },
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_re_verification_turns_its_tests_red(tmp_path: Path, mutation: Mutation) -> None:
    assert_turns_red(tmp_path, mutation)


def test_the_named_tests_pass_without_a_mutation(tmp_path: Path) -> None:
    assert_green_unmutated(tmp_path, MUTATIONS)

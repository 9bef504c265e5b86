"""Negative controls for the resource-group rules of reaping: break each in a copy of the
package (the Azure reaper, or the core's planner); each named test must fail at its named
check (harness: tests/cloudguard_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import cloudguard_azure
import pytest
from cloudguard_mutants import AZURE_SDKS, Mutation, assert_turns_red

AZURE = Path(cloudguard_azure.__file__).resolve().parent
TESTS = "adapters/azure/tests/test_azure_reap_groups.py"
NOT_FOUND = f"{TESTS}::test_an_app_that_reads_not_found_holds_the_group_and_is_named"
RACED = f"{TESTS}::test_a_resource_created_before_any_request_is_never_deleted_with_the_group"
CHANGED = f"{TESTS}::test_a_member_changed_before_any_request_is_never_deleted_with_the_group"
FROM_THE_START = (
    f"{TESTS}::test_a_group_that_held_someone_elses_app_from_the_start_is_reaped_member_by_member"
)

MUTATIONS = [
    Mutation(
        name="a member its listing shows and its read does not find is taken as gone",
        module="reaper.py",
        original="            if read is None:\n                raise ReadError(\n",
        broken=(
            "            if read is None:\n"
            "                continue\n"
            "                raise ReadError(\n"
        ),
        tests=(NOT_FOUND,),
        check="the-group-is-held",
        package=AZURE,
    ),
    Mutation(
        name="no listing right before a group's DELETE",
        module="reaper.py",
        original="            self._last_look(item, group, sub)  # nothing is sent between",
        broken="            pass  # nothing is sent between",
        tests=(f"{RACED}[one-page]",),
        check="never-deleted-with-the-group",
        package=AZURE,
    ),
    Mutation(
        name="the last listing's new member not compared",
        module="reaper.py",
        original="            if key not in seen:\n",
        broken="            if key not in seen:\n                continue\n",
        tests=(f"{RACED}[one-page]",),
        check="never-deleted-with-the-group",
        package=AZURE,
    ),
    Mutation(
        name="the last listing's members not compared with their read",
        module="reaper.py",
        original="            if _mark(entry) != seen[key]:\n",
        broken="            if False:\n",
        tests=(f"{CHANGED}[protected]", f"{CHANGED}[re-created]"),
        check="never-deleted-changed",
        package=AZURE,
    ),
    Mutation(
        name="a listing that names a resource twice taken as what the group holds",
        module="reaper.py",
        original="            if key in found:\n",
        broken="            if key in found and False:\n",
        tests=(f"{RACED}[a-page-per-resource]",),
        check="never-deleted-with-the-group",
        package=AZURE,
    ),
    Mutation(
        name="a group holding what is not the fleet's planned whole",
        module="reap/planning.py",
        original="        if (other := others.get(where)) is not None:\n",
        broken="        if (other := None) is not None:\n",
        tests=(FROM_THE_START,),
        check="planned-member-by-member",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_a_group_rule_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS, AZURE_SDKS)

"""Negative controls for the Google Cloud reaper: break it in a copy of cloudguard_gcp; the named
end-to-end test (test_gcp_reaper.py) must fail at its named check (tests/cloudguard_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import cloudguard_gcp
import pytest
from cloudguard_mutants import GCP_SDKS, Mutation, assert_turns_red

GCP = Path(cloudguard_gcp.__file__).resolve().parent
REAPER = "adapters/gcp/tests/test_gcp_reaper.py::"
LEAKED = "adapters/gcp/tests/test_gcp_leaked_run.py::"
EVERY = "adapters/gcp/tests/test_gcp_reap_every_request.py::"

MUTATIONS = [
    Mutation(
        name="an item is read and acted on by its name, not the numeric id the plan reviewed",
        module="reaper.py",
        original="    return _Address(project, scope, where, collection, uid, client)\n",
        broken="    return _Address(project, scope, where, collection, found.group(5), client)\n",
        tests=(
            REAPER + "test_an_instance_re_created_between_the_read_and_the_delete_is_not_deleted",
            LEAKED + "test_a_snapshot_re_created_between_the_read_and_the_delete_is_not_deleted",
        ),
        check="bound-to-the-reviewed-id",
        package=GCP,
    ),
    Mutation(
        name="an instance's deletion protection is not read",
        module="reaper.py",
        original="                    if found.deletion_protection\n",
        broken="                    if False\n",
        tests=(REAPER + "test_deletion_protection_is_protection_before_compute_would_refuse",),
        check="deletion-protection-read",
        package=GCP,
    ),
    Mutation(
        name="a disk's users are not read: an attached disk looks free",
        module="reaper.py",
        original='attached_to=", ".join(users) or None)\n',
        broken="attached_to=None)\n",
        tests=(REAPER + "test_a_disk_attached_after_the_plan_is_not_deleted",),
        check="attachment-re-read",
        package=GCP,
    ),
    Mutation(
        name="an Operation that ended in error is taken as done",
        module="reaper.py",
        original="        if errors:\n",
        broken="        if False:\n",
        tests=(REAPER + "test_an_operation_that_ends_in_error_is_a_failure_naming_computes_code",),
        check="operation-error-fails",
        package=GCP,
    ),
    Mutation(
        name="the action's Operation is not waited for",
        module="reaper.py",
        original="        while operation.status != operation.Status.DONE:\n",
        broken="        while False:\n",
        tests=(
            REAPER
            + "test_the_orphan_is_stopped_by_default_bound_to_its_id_and_the_healthy_vm_runs_on",
        ),
        check="operation-waited",
        package=GCP,
    ),
    Mutation(
        name="an action is asked again without its requestId",
        module="reaper.py",
        original='        asked = {**address.asked(), "request_id": str(uuid.uuid4())}\n',
        broken="        asked = address.asked()\n",
        tests=(REAPER + "test_a_delete_whose_answer_is_lost_is_asked_again_and_done_once",),
        check="lost-answer-asked-again-once",
        package=GCP,
    ),
    Mutation(
        name="an action whose answer is lost is not asked again",
        module="reaper.py",
        original="request=asked, retry=clients.retry(self._request),",
        broken="request=asked, retry=None,",
        tests=(REAPER + "test_a_delete_whose_answer_is_lost_is_asked_again_and_done_once",),
        check="lost-answer-asked-again-once",
        package=GCP,
    ),
    Mutation(
        name="a global address's and a regional disk's use is not read",
        module="reaper.py",
        original="        users = [last_segment(user) for user in found.users]\n",
        broken="        users = []\n",
        tests=(
            LEAKED + "test_addresses_and_a_regional_disk_in_use_since_the_plan_are_kept",
            EVERY + "test_a_change_before_any_request_of_apply_to_another_kind_is_never_a_wrong_"
            "action[regional-disk]",
        ),
        check={
            LEAKED + "test_addresses_and_a_regional_disk_in_use_since_the_plan_are_kept": (
                "attachment-re-read"
            ),
            EVERY + "test_a_change_before_any_request_of_apply_to_another_kind_is_never_a_wrong_"
            "action[regional-disk]": "every-change-seen",
        },
        package=GCP,
    ),
    Mutation(
        name="a regional disk is priced at the zonal rate",
        module="prices.py",
        original='        regional = "/regions/" in resource.id',
        broken="        regional = False",
        tests=(LEAKED + "test_the_run_is_priced_from_the_billing_catalog",),
        check="regional-disk-regional-rate",
        package=GCP,
    ),
    Mutation(
        name="the plan's lock is never taken: two applies both act",
        module="reap/locks.py",
        original="            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n",
        broken="            pass\n",
        tests=(
            "adapters/gcp/tests/test_gcp_reap_race.py::test_two_applies_of_one_plan_send_one_delete",
        ),
        check="one-delete-for-two-applies",
    ),
    Mutation(
        name="a kind no command deletes is told to run `None`",
        module="cloud/cloud.py",
        original="        return str(found) if found else None  # an adapter",
        broken="        return str(found)  # an adapter",
        tests=(LEAKED + "test_every_kind_with_one_clear_delete_is_reaped_and_the_rest_is_said",),
        check="no-command-said-so",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_gcp_reaper_turns_its_test_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS, GCP_SDKS)

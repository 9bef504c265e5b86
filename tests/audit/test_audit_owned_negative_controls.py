"""Negative controls: break owned-id evidence on purpose; the named tests must go red at
their named checks (harness: tests/cloudguard_mutants.py).

A fact the classification ignores, an id compared with the wrong case, a
data source taken as owned, or an unread source taken as "owns nothing" must
each turn a named test red at its named check.
"""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

CLI = "tests/audit/test_audit_owned_cli.py"
IDS = "tests/audit/test_audit_owned_ids.py"
END_TO_END = (
    f"{CLI}::test_a_vm_terraform_state_owns_is_ok_without_a_controller_record"
    "_and_an_orphan_stays_one"
)
LIVE_AZURE = (
    "adapters/azure/tests/test_azure_terraform_owned.py::"
    "test_workers_terraform_owns_are_ok_without_records_and_the_incident_stays_an_orphan"
)

MUTATIONS = [
    Mutation(
        name="owned-ids fact ignored",
        module="audit/classify.py",
        original="owner = evidence.owner_of(resource.id) if evidence.owned_ids else None",
        broken="owner = None",
        tests=(END_TO_END, LIVE_AZURE),
        check="an-owned-vm-is-ok",
    ),
    Mutation(
        name="ARM ids compared case-sensitively",
        module="audit/evidence/interface.py",
        original='return cloud_id.casefold() if cloud_id.startswith("/") else cloud_id',
        broken="return cloud_id",
        tests=(END_TO_END, LIVE_AZURE),
        check="an-owned-vm-is-ok",
    ),
    Mutation(
        name="unread ownership source read as owning nothing",
        module="audit/classify.py",
        original='elif record == "missing" and owner is None and evidence.ownership_unread:',
        broken='elif record == "missing" and owner is None and False:',
        tests=(
            f"{CLI}::test_an_unreadable_owned_id_source_is_75_and_calls_nothing_an_orphan"
            "[command-exits-3]",
            f"{CLI}::test_an_unreadable_owned_id_source_is_75_and_calls_nothing_an_orphan"
            "[state-missing]",
        ),
        check="unread-ownership-is-unverified",
    ),
    Mutation(
        name="a timeout kills only the command's leader, not its group",
        module="audit/evidence/owned_ids_program.py",
        original="        os.killpg(process.pid, signal.SIGKILL)\n",
        broken="        os.kill(process.pid, signal.SIGKILL)\n",
        tests=(f"{IDS}::test_a_command_that_times_out_is_killed_with_its_children",),
        check="the-whole-group-is-killed",
    ),
    Mutation(
        name="data sources taken as owned",
        module="audit/evidence/terraform_state.py",
        original='        if resource.get("mode") != "managed":\n            continue\n',
        broken="",
        tests=(f"{IDS}::test_a_state_file_owns_the_ids_of_its_managed_resources_only",),
        check="a-data-source-is-not-owned",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_owned_id_evidence_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)

"""Negative controls for the hard seal: break the sink's recording, the DNS answer, the masks or
the fail-closed checks in a copy of the package; the named tests must go red for that reason
(harness: tests/cloudguard_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cloudguard_mutants import Mutation, assert_green_unmutated, assert_turns_red

CORPUS = (
    "tests/hard/test_hard_corpus.py::test_every_technique_is_recorded_and_red_under_the_hard_seal"
)
RUNNING_TEST = (
    "tests/hard/test_hard_corpus.py::test_under_pytest_a_record_names_the_test_that_was_running"
)
FAIL_CLOSED = "tests/hard/test_hard_fail_closed.py::"
AGREE = f"{FAIL_CLOSED}test_what_the_supervisor_relayed_and_the_run_received_must_agree"
KILLED = f"{FAIL_CLOSED}test_a_supervisor_killed_from_outside_before_the_command_ends_is_97"
INTEGRITY = "tests/guard/test_verdict_integrity.py::"
UNSTOPPABLE = f"{INTEGRITY}test_under_hard_the_command_cannot_stop_or_kill_its_supervisor"
OWN_PROCESSES = f"{INTEGRITY}test_under_hard_the_command_sees_only_its_own_processes"
UNREADABLE_INIT = f"{INTEGRITY}test_under_hard_the_commands_init_cannot_be_read"
XDIST_RUNNING_TEST = (
    "tests/hard/test_hard_corpus.py::test_under_xdist_each_record_names_its_own_workers_test"
)

MUTATIONS = [
    Mutation(
        name="the sink records nothing",
        module="guard/hard/sink.py",
        original="        self.relay.record(entry)\n",
        broken="            pass\n",
        tests=(f"{CORPUS}[curl]", f"{CORPUS}[getent-lookup]", f"{CORPUS}[python-isolated-imds]"),
        reason="the run did not go red",  # nothing recorded: the check sees a clean run
    ),
    Mutation(
        name="the resolver answers no address",
        module="guard/hard/dns.py",
        original="    if query.query_type in (A, AAAA):\n",
        broken="    if False:\n",
        tests=(
            "tests/hard/test_hard_corpus.py::test_a_connection_is_attributed_to_the_name_it_was_resolved_from",
        ),
        reason="the DNS answer gave it nowhere to go",
    ),
    Mutation(
        name="pytest does not tell the sink its running test",
        module="guard/hard/running.py",
        original="    if not seal_root:\n        return\n",
        broken="    if True:\n        return\n",
        tests=(RUNNING_TEST, XDIST_RUNNING_TEST),
        # each named test's own message (the harness reads each one's, never the pooled output)
        reason={
            RUNNING_TEST: "the records do not name the running tests",
            XDIST_RUNNING_TEST: "a record does not name its own test",
        },
    ),
    Mutation(
        name="no credential home is masked",
        module="guard/hard/supervisor.py",
        original='masked = [path for path in spec["mask"] if masks.mask(path, empty)]',
        broken="masked: list[str] = []",
        tests=(
            "tests/hard/test_hard_masks.py::test_planted_credentials_are_invisible_inside_and_untouched_after",
        ),
        reason="the planted credential_process ran inside",
    ),
    Mutation(
        name="the host check ignores disabled user namespaces",
        module="guard/hard/requirements.py",
        original='if _sysctl("user.max_user_namespaces") == "0":',
        broken="if False:",
        tests=(
            "tests/hard/test_hard_fail_closed.py::test_no_user_namespaces_is_75_naming_the_sysctl_and_nothing_runs",
        ),
        reason="the cause was not named",
    ),
    Mutation(
        name="a setup failure is not reported as one",
        module="guard/hard/launch.py",
        original='    if "setup_error" in merged:\n',
        broken="    if False:\n",
        tests=(
            "tests/hard/test_hard_fail_closed.py::test_a_device_that_is_not_a_tun_is_75_naming_it_and_nothing_runs",
        ),
        reason="the cause was not named",
    ),
    Mutation(
        name="a record the sink could not relay is not reported",
        module="guard/hard/launch.py",
        original='    if merged.get("lost"):\n',
        broken="    if False:\n",
        tests=(AGREE,),
        reason="a record the sink could not relay passed",
    ),
    Mutation(
        name="the relayed count is not checked",
        module="guard/hard/launch.py",
        original='    if str(merged.get("recorded")) != str(received):\n',
        broken="    if False:\n",
        tests=(AGREE,),
        reason="a record lost between the seal and the run passed",
    ),
    Mutation(
        name="a dead sink is not noticed",
        module="guard/hard/launch.py",
        original='    if "code" not in merged:\n',
        broken='    if "code" not in merged:\n        return code\n    if False:\n',
        tests=(KILLED,),
        reason="assert 137 == 97",  # the killed supervisor's own code instead of 97
    ),
    Mutation(
        name="the command shares the supervisor's pid namespace",
        module="guard/hard/supervisor.py",
        original="        linux.unshare(linux.CLONE_NEWPID)\n",
        broken="        pass\n",
        also=(
            (
                "guard/hard/supervisor.py",
                '        linux.mount("proc", "/proc", "proc", linux.MS_NOSUID',
                '        (lambda *a: None)("proc", "/proc", "proc", linux.MS_NOSUID',
            ),
        ),
        tests=(UNSTOPPABLE, OWN_PROCESSES),
        reason={
            UNSTOPPABLE: "the attack on the supervisor cost a record",
            OWN_PROCESSES: "the command saw processes outside its run",
        },
    ),
    Mutation(
        name="the command's init can be traced and read",
        module="guard/hard/supervisor.py",
        original="        linux.set_dumpable(False)  # after the id maps",
        broken="        linux.set_dumpable(True)  # after the id maps",
        tests=(UNREADABLE_INIT,),
        reason="the command read its init's descriptors",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_hard_seal_turns_its_tests_red(tmp_path: Path, mutation: Mutation) -> None:
    assert_turns_red(tmp_path, mutation)


def test_the_named_tests_pass_without_a_mutation(tmp_path: Path) -> None:
    assert_green_unmutated(tmp_path, MUTATIONS)

"""Negative controls for the hard seal: break the sink's recording, the DNS answer, the masks or
the fail-closed checks in a copy of the package; each named test must fail at its named check
(harness: tests/cloudguard_mutants.py)."""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

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
PROJECT_HOME = (
    "tests/hard/test_hard_masks.py::test_a_projects_own_file_home_is_masked_empty_and_read_only"
)
NAMES_THE_SENDER = (
    "tests/hard/test_hard_corpus.py::test_a_record_names_the_program_and_the_test_that_was_running"
)
XDIST_RUNNING_TEST = (
    "tests/hard/test_hard_corpus.py::test_under_xdist_each_record_names_its_own_workers_test"
)

MUTATIONS = [
    Mutation(
        name="the sink records nothing",
        module="guard/hard/sink.py",
        original="        self.relay.record(entry)\n",
        broken="        pass\n",
        tests=(f"{CORPUS}[curl]", f"{CORPUS}[getent-lookup]", f"{CORPUS}[python-isolated-imds]"),
        check="the-reach-is-recorded",
    ),
    Mutation(
        name="the resolver answers no address",
        module="guard/hard/dns.py",
        original="    if query.query_type in (A, AAAA):\n",
        broken="    if False:\n",
        tests=(
            "tests/hard/test_hard_corpus.py::test_a_connection_is_attributed_to_the_name_it_was_resolved_from",
        ),
        check="the-answer-leads-to-the-sink",
    ),
    Mutation(
        name="pytest does not tell the sink its running test",
        module="guard/hard/running.py",
        original="    if not seal_root:\n        return\n",
        broken="    if True:\n        return\n",
        tests=(RUNNING_TEST, XDIST_RUNNING_TEST),
        check="records-name-the-running-test",
    ),
    Mutation(
        name="no credential home is masked",
        module="guard/hard/supervisor.py",
        original='masked = [path for path in spec["mask"] if masks.mask(path, empty)]',
        broken="masked: list[str] = []",
        tests=(
            "tests/hard/test_hard_masks.py::test_planted_credentials_are_invisible_inside_and_untouched_after",
        ),
        check="credential-homes-masked",
    ),
    Mutation(
        name="a file home is not masked (only directories are)",
        module="guard/hard/masks.py",
        original="    if os.path.exists(path):\n        linux.mount(empty_file,",
        broken="    if False:\n        linux.mount(empty_file,",
        tests=(PROJECT_HOME,),
        check="a-projects-file-home-is-masked",
    ),
    Mutation(
        name="a project's [hard.masked_homes] is not read",
        module="guard/registry.py",
        original="masked_homes=tuple(dict.fromkeys(h for f in files for h in f.masked_homes)),",
        broken="masked_homes=tuple(default.masked_homes),",
        tests=(PROJECT_HOME,),
        check="a-projects-file-home-is-masked",
    ),
    *(
        Mutation(
            name=f"a record names {whose} as the sender",
            module="guard/hard/attribution.py",
            original="    return Sender(pid=inner, ppid=inner_parent,",
            broken=f"    return Sender(pid={pid}, ppid=inner_parent,",
            tests=(NAMES_THE_SENDER,),
            check="the-record-names-the-sender",
        )
        for whose, pid in (("no pid", "None"), ("the parent's pid", "inner_parent"))
    ),
    Mutation(
        name="the host check ignores disabled user namespaces",
        module="guard/hard/requirements.py",
        original='if _sysctl("user.max_user_namespaces") == "0":',
        broken="if False:",
        tests=(
            "tests/hard/test_hard_fail_closed.py::test_no_user_namespaces_is_75_naming_the_sysctl_and_nothing_runs",
        ),
        check="the-sysctl-is-named",
    ),
    Mutation(
        name="a setup failure is not reported as one",
        module="guard/hard/launch.py",
        original='    if "setup_error" in merged:\n',
        broken="    if False:\n",
        tests=(
            "tests/hard/test_hard_fail_closed.py::test_a_device_that_is_not_a_tun_is_75_naming_it_and_nothing_runs",
        ),
        check="the-tun-refusal-is-named",
    ),
    Mutation(
        name="a record the sink could not relay is not reported",
        module="guard/hard/launch.py",
        original='    if merged.get("lost"):\n',
        broken="    if False:\n",
        tests=(AGREE,),
        check="lost-record-reported",
    ),
    Mutation(
        name="the relayed count is not checked",
        module="guard/hard/launch.py",
        original='    if str(merged.get("recorded")) != str(received):\n',
        broken="    if False:\n",
        tests=(AGREE,),
        check="relayed-count-checked",
    ),
    Mutation(
        name="a dead sink is not noticed",
        module="guard/hard/launch.py",
        original='    if "code" not in merged:\n',
        broken='    if "code" not in merged:\n        return code\n    if False:\n',
        tests=(KILLED,),
        check="a-dead-sink-is-97",
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
        check={
            UNSTOPPABLE: "the-supervisor-survives-its-command",
            OWN_PROCESSES: "only-its-own-processes",
        },
    ),
    Mutation(
        name="the command's init can be traced and read",
        module="guard/hard/supervisor.py",
        original="        linux.set_dumpable(False)  # after the id maps",
        broken="        linux.set_dumpable(True)  # after the id maps",
        tests=(UNREADABLE_INIT,),
        check="its-init-unreadable",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_hard_seal_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)

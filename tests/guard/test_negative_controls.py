"""Negative controls: break each guard on purpose; each named test must fail at its named check
(harness: tests/cloudguard_mutants.py).

Each control mutates one guard in a copy of the package: the seal drops
nothing, the provider is not bound, the guard bin is off PATH, the check sees
nothing, the refusers record nothing.
"""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

HOSTILE = (
    "tests/guard/test_refusers.py::"
    "test_hostile_environment_nothing_planted_reaches_the_command_or_the_record"
)
CLEAN_RUN = (
    "tests/guard/test_run.py::test_a_clean_command_keeps_its_own_exit_code_and_prints_one_seal_line"
)
REACH_RUN = "tests/guard/test_run.py::test_a_reach_makes_the_run_red_and_names_what_was_reached"
CHECK = "tests/guard/test_run.py::test_check_reports_clean_red_and_unreadable_logs"
SHIMS = "tests/guard/test_refusers.py::test_every_shipped_shim_records_then_refuses_with_98"
TRUNCATED_RUN = (
    "tests/guard/test_reach_trust.py::test_a_reach_then_a_truncation_back_to_the_start_is_still_red"
)
TRUNCATED_TEST = (
    "tests/guard/test_plugin_log_trust.py::"
    "test_a_test_that_tampers_with_the_log_fails_naming_both_and_the_session_is_98[truncate]"
)
REPLACED_UNDER_RUN = (
    "tests/guard/test_plugin_log_trust.py::"
    "test_under_run_a_test_that_replaces_the_log_fails_and_the_run_is_98"
)
SCRUBBED_RUN = (
    "tests/guard/test_run.py::"
    "test_a_shim_run_with_a_scrubbed_environment_still_reaches_the_runs_keeper"
)
INTEGRITY = "tests/guard/test_verdict_integrity.py::"
PADDED = f"{INTEGRITY}test_rewriting_the_log_in_place_after_a_reach_is_still_red"
SYMLINKED = "tests/guard/test_reach_trust.py::test_a_symlink_to_an_armed_log_is_not_followed"
THEIRS = "tests/guard/test_reach_trust.py::test_another_users_armed_log_is_not_continued"
PROVIDER = "tests/guard/test_run.py::test_the_refusing_provider_is_bound_and_refuses_loudly"

MUTATIONS = [
    Mutation(
        name="seal drops nothing",
        module="guard/seal_registry.py",
        original="return name in self.names or name.startswith(self.prefixes)",
        broken="return False",
        tests=(HOSTILE, CLEAN_RUN),
        check={HOSTILE: "identity-variables-dropped", CLEAN_RUN: "seal-line-names-the-dropped"},
    ),
    Mutation(
        name="provider not bound",
        module="guard/seal.py",
        original="env[variable] = str(seal.provider)",
        broken="pass",
        tests=(PROVIDER,),
        check="provider-refuses",
    ),
    Mutation(
        name="guard bin not on PATH",
        module="guard/seal.py",
        original='env["PATH"] = guard_first(seal, environ.get("PATH", ""))',
        broken='env["PATH"] = environ.get("PATH", "")',
        tests=(REACH_RUN, HOSTILE),
        check={REACH_RUN: "az-is-the-refusing-shim", HOSTILE: "cli-and-provider-refused"},
    ),
    Mutation(
        name="check sees nothing",
        module="guard/alarm.py",
        original="    if records:\n",
        broken="    if False:\n",
        tests=(REACH_RUN, CHECK),
        check={REACH_RUN: "run-red-on-reach", CHECK: "check-red-on-reach"},
    ),
    Mutation(
        name="refuser records nothing",  # with no keeper: a log armed by hand
        module="guard/reach.py",
        original="        append(log, record)\n",
        broken="        pass\n",
        tests=(SHIMS,),
        check="every-refusal-recorded",
    ),
    Mutation(
        name="a record glued onto a torn line",
        module="guard/reach.py",
        original='            line = b"\\n" + line  # a writer died mid-line:',
        broken="            line = line  # glued on:",
        tests=(
            "tests/guard/test_reach_log.py::"
            "test_a_write_cut_short_leaves_a_torn_line_refused_and_the_next_record_whole",
        ),
        check="the-next-record-is-whole",
    ),
    Mutation(
        name="the keeper keeps nothing",
        module="guard/keeper.py",
        original="            self.records.append(dict(record))\n",
        broken="            pass\n",
        tests=(REACH_RUN,),
        check="run-red-on-reach",  # the writer's line is in the log; the keeper's verdict is not
    ),
    Mutation(
        name="shims do not know their log",
        module="guard/seal.py",
        original='f"main(via={via!r}, tool={tool!r}, policy={policy!r}, log={_absolute(log)!r}, "',
        broken='f"main(via={via!r}, tool={tool!r}, policy={policy!r}, log=None, "',
        tests=(
            "tests/guard/test_refusers.py::test_a_shim_made_for_a_log_records_there_with_a_scrubbed_environment",
        ),
        check="a-shim-knows-its-log",
    ),
    Mutation(
        name="shims do not know their keepers",
        module="guard/seal.py",
        original='f"keepers={list(keepers)!r})\\n"',
        broken='"keepers=[])\\n"',
        tests=(SCRUBBED_RUN,),
        check="scrubbed-shim-kept",
    ),
]


# The verdict's integrity (docs/guard.md): each rule broken, its tests red with their own message.
MUTATIONS += [
    Mutation(
        name="the verdict is read from the log file",
        module="guard/session.py",
        original="        if self.keeper is None:\n            return alarm.check(",
        broken="        if True:\n            return alarm.check(",
        tests=(TRUNCATED_RUN, PADDED),
        check={
            TRUNCATED_RUN: "an-altered-log-is-still-red",
            PADDED: "a-rewritten-log-is-still-red",
        },
    ),
    Mutation(
        name="the keeper never checks its report",
        module="guard/keeper.py",
        original="        if not self._report_holds_every_line():\n",
        broken="        if False:\n",
        tests=(TRUNCATED_RUN, PADDED),
        check="the-alteration-is-named",
    ),
    Mutation(
        name="the watch ignores a replaced log",
        module="guard/alarm.py",
        original="        if (at_path.st_dev, at_path.st_ino) != self._identity:\n",
        broken="        if False:\n",
        tests=(REPLACED_UNDER_RUN,),
        check="the-replacing-test-fails",
    ),
    Mutation(
        name="an own file is opened through a link",
        module="private_files.py",
        original="extra = 0 if follow else os.O_NOFOLLOW",
        broken="extra = 0",
        tests=(SYMLINKED,),
        check="a-linked-log-is-refused-as-a-link",
    ),
]
ONE_VERDICT = "tests/pytest_plugin/test_plugin_one_verdict.py::test_one_verdict_in_every_mode"
MUTATIONS += [
    Mutation(
        name="a session under a run does not name the suite's own settings for its workers",
        module="guard/pytest/early.py",
        original="declared_since(self.inherited, self.registry))\n",
        broken="[])\n",
        tests=(f"{ONE_VERDICT}[run-xdist-declared-settings]",),
        check="a-session-trusts-its-seal",
    ),
    Mutation(
        name="the hard seal answers a refuser before the run holds its record",
        module="guard/hard/relay.py",
        original="                while expected:\n",
        broken="                while False:\n",
        tests=(
            "tests/hard/test_hard_relay.py::test_the_relay_returns_only_after_the_host_answered",
        ),
        check="the-relay-waits-for-the-answer",
    ),
]
STALE_SEAL = (
    "tests/guard/test_inherited_seal.py::"
    "test_a_stale_inherited_seal_is_sealed_again_and_the_real_az_never_runs"
)
MUTATIONS.append(
    Mutation(
        name="an inherited seal is assumed",
        module="guard/seal.py",
        original="    if problems:\n        sys.stderr.write(",
        broken="    if False:\n        sys.stderr.write(",
        tests=(STALE_SEAL,),
        check="a-stale-seal-is-sealed-again",
    )
)
# A Python child's guards record by the seal's own rules (cloudguard/guard/_sitecustomize).
PYTHON_CHILD = (
    "tests/guard/test_python_child.py::"
    "test_a_python_childs_record_names_the_identity_variables_still_set"
)
MUTATIONS.append(
    Mutation(
        name="a Python child is handed no way to its seal's policy",
        module="guard/_sitecustomize/sitecustomize.py",
        original="inprocess.install(log=log, find_policy=_policy_of_the_live_seal)",
        broken="inprocess.install(log=log)",
        tests=(PYTHON_CHILD,),
        check="a-child-names-identity-variables",
    )
)
# Credential stores, the order of redirections, provider variables, doctor.
STORES = "tests/guard/test_credential_stores.py::"
EVERY_STORE = STORES + "test_every_store_points_at_an_empty_place_inside_the_seal"
for variable, line, tool in (
    ("AZURE_CONFIG_DIR", '"AZURE_CONFIG_DIR": str(self.root / "azure"),', "az"),
    ("AWS_CONFIG_FILE", '"AWS_CONFIG_FILE": str(self.root / "aws" / "config"),', "aws"),
    (
        "AWS_SHARED_CREDENTIALS_FILE",
        '"AWS_SHARED_CREDENTIALS_FILE": str(self.root / "aws" / "credentials"),',
        "aws",
    ),
    ("CLOUDSDK_CONFIG", '"CLOUDSDK_CONFIG": str(self.root / "gcloud"),', "gcloud"),
):
    tool_test = f"{STORES}test_a_cli_reading_its_store_finds_nothing_of_the_operators[{tool}]"
    MUTATIONS.append(
        Mutation(
            name=f"{variable} not redirected",
            module="guard/seal.py",
            original=line,
            broken="",
            tests=(EVERY_STORE, tool_test),
            check={
                EVERY_STORE: f"store-redirected:{variable}",
                tool_test: "the-operators-store-unseen",
            },
        )
    )
PROVIDERS = "tests/guard/test_provider_variables.py::"
MUTATIONS += [
    Mutation(
        name="redirections applied first",
        module="guard/seal.py",
        original="    env.update(seal.redirections())  # last: nothing above may rebind",
        broken="    env = {**seal.redirections(), **env}  #",
        tests=(PROVIDERS + "test_redirections_are_applied_last_whatever_a_registry_binds",),
        check="redirections-applied-last",
    ),
    Mutation(
        name="any provider variable admitted",
        module="guard/seal_registry.py",
        original="        if why:\n            raise RegistryError(",
        broken="        if False:\n            raise RegistryError(",
        tests=(PROVIDERS + "test_the_run_refuses_admission_with_97",),
        check="metadata-switches-not-rebindable",
    ),
    Mutation(
        name="doctor does not check redirections",
        module="guard/doctor.py",
        original="        if environ.get(name) != value:\n",
        broken="        if False:\n",
        tests=(PROVIDERS + "test_doctor_checks_every_redirected_value",),
        check="doctor-checks-redirections",
    ),
]
STDIN = (
    "tests/guard/test_refusers.py::test_stdin_is_never_read_a_file_given_as_stdin_keeps_offset_0"
)
MUTATIONS.append(
    Mutation(
        name="a refuser drains stdin",
        module="guard/refuse.py",
        original="    args = list(sys.argv[1:] if argv is None else argv)\n",
        broken="    sys.stdin.buffer.read()\n    args = list(sys.argv[1:])\n",
        tests=(f"{STDIN}[az]", f"{STDIN}[cloudguard-refusing-provider]"),
        check="stdin-never-read",
    )
)
# Values from outside, escaped; reports written without following links.
ESCAPING = "tests/guard/test_terminal_escaping.py::"
AUDIT_TRUST = "tests/audit/test_audit_trust.py::"
MUTATIONS += [
    Mutation(
        name="describe shows values raw",
        module="guard/alarm.py",
        original="    return one_line(str(value), limit)\n",
        broken="    return str(value)\n",
        tests=(
            ESCAPING + "test_describe_escapes_every_field",
            ESCAPING + "test_run_and_check_output_is_escaped",
        ),
        check={
            ESCAPING + "test_describe_escapes_every_field": "describe-escapes",
            ESCAPING + "test_run_and_check_output_is_escaped": "output-escaped",
        },
    ),
    Mutation(
        name="the refusers' escaping imports typing (and re, enum, collections with it)",
        module="escape.py",
        original="TYPE_CHECKING = False  # typing costs",
        broken="import typing  # noqa: F401\nTYPE_CHECKING = False  # typing costs",
        tests=(
            "tests/guard/test_refusers.py::test_a_refuser_imports_only_the_lean_set[az]",
            "tests/guard/test_refusers.py::"
            "test_a_refuser_imports_only_the_lean_set[cloudguard-refusing-provider]",
        ),
        check="refusers-import-only-the-lean-set",
    ),
    Mutation(
        name="markdown cells keep link syntax",
        module="escape.py",
        original='_ACTIVE = "\\\\`*_~|[]()!<>&:."',
        broken='_ACTIVE = "\\\\|`"',
        tests=(AUDIT_TRUST + "test_a_markdown_cell_escapes_link_and_image_syntax",),
        check="markdown-links-escaped",
    ),
]
# Configuration discovery (cloudguard/project_file.py) and the plugin's watch.
FINDER = "tests/guard/test_project_file.py::"
UNTRUSTED = FINDER + "test_every_command_refuses_an_untrusted_file_with_97"
MUTATIONS += [
    Mutation(
        name="discovery climbs past the repository root",
        module="project_file.py",
        original="        if root is None or directory == root or directory.parent == directory:\n",
        broken="        if directory.parent == directory:\n",
        tests=(
            FINDER + "test_never_above_the_repository_root",
            FINDER + "test_outside_a_repository_only_the_working_directory",
        ),
        check={
            FINDER + "test_never_above_the_repository_root": "never-above-the-repository",
            FINDER + "test_outside_a_repository_only_the_working_directory": (
                "never-above-the-working-directory"
            ),
        },
    ),
    Mutation(
        name="a group-writable cloudguard.toml is trusted",
        module="project_file.py",
        original="    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):\n",
        broken="    if False:\n",
        tests=(f"{UNTRUSTED}[command0]", f"{UNTRUSTED}[command1]", f"{UNTRUSTED}[command2]"),
        check="the-untrusted-file-is-refused",
    ),
    Mutation(
        name="the plugin never names the keeper's tampering",
        module="guard/pytest/session_guard.py",
        original="        self.tampering_reported = len(tampering)\n",
        broken="        self.tampering_reported = len(tampering)\n        del problems[1:]\n",
        tests=(TRUNCATED_TEST,),
        check="the-tampering-is-named",
    ),
    Mutation(
        name="a joined session looks at the size only",
        module="guard/session.py",
        original="        if self.log.watch.verify() == cursor:\n",
        broken="        if _size(self.log.path) == cursor:\n",
        tests=(REPLACED_UNDER_RUN,),
        check="the-replacing-test-fails",
    ),
]
# Owner checks, met by a second user (tests/second_uid.py): the same as root or not.
MUTATIONS += [
    Mutation(
        name="another user's file passes for our own",
        module="private_files.py",
        original="    if status.st_uid != os.geteuid():\n",
        broken="    if False:\n",
        tests=(
            THEIRS,
            "tests/guard/test_private_files.py::"
            "test_another_users_file_is_refused_before_truncation",
            "tests/reap/test_reap_log_faults.py::test_a_log_owned_by_someone_else_is_refused",
        ),
        check={
            THEIRS: "another-users-log-refused",
            "tests/guard/test_private_files.py::"
            "test_another_users_file_is_refused_before_truncation": "another-users-file-refused",
            "tests/reap/test_reap_log_faults.py::test_a_log_owned_by_someone_else_is_refused": (
                "another-users-log-refused"
            ),
        },
    ),
    Mutation(
        name="another user's cloudguard.toml is trusted",
        module="project_file.py",
        original="    if status.st_uid != os.geteuid():\n",
        broken="    if False:\n",
        tests=(FINDER + "test_another_users_file_is_refused_naming_it",),
        check="another-users-file-refused",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_guard_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)

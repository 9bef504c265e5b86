"""Negative controls for issue 20: break trust, the one open, or its checks in a copy of
cloudguard; each attack test must fail at its named check (tests/cloudguard_mutants.py)."""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

TRUST = "tests/cli/test_trust.py"
OPENS = "tests/cli/test_file_opens.py"
COMMITTED = f"{TRUST}::test_a_committed_command_does_not_run_until_the_operator_trusts_the_file"
POLICY = "tests/cli/test_untrusted_policy.py"
HEADS = tuple(
    f"{POLICY}::test_every_report_head_names_the_untrusted_file_and_its_keys[{fmt}]"
    for fmt in ("table", "json", "markdown", "junit", "sarif", "html")
)
NOT_YOURS = tuple(
    f"{POLICY}::test_a_config_file_that_is_not_yours_alone_is_refused[{whose}]"
    for whose in ("writable by others", "another user's")
)

MUTATIONS = [
    Mutation(
        name="a report head leaves out whose policy it was",
        module="audit/formats/summary.py",
        original='    return f"{text} {whose}" if whose else text\n',
        broken="    return text\n",
        also=(
            (
                "documents/audit_report.py",
                '            "untrusted_file": untrusted_file_document(report.policy),\n',
                '            "untrusted_file": None,\n',
            ),
        ),
        tests=HEADS,
        check="the-report-names-whose-policy",
    ),
    Mutation(
        name="the plan leaves out whose policy it was",
        module="documents/plan.py",
        original="            **untrusted_policy(plan.policy),\n",
        broken="",
        tests=(f"{POLICY}::test_the_plan_names_the_untrusted_file_and_its_keys",),
        check="the-plan-names-whose-policy",
    ),
    Mutation(
        name="an untrusted file's leaked-by applies",
        module="settings/core_options.py",
        original='which reaping deletes", ignored=True),\n',
        broken='which reaping deletes", reported=True),\n',
        tests=(f"{POLICY}::test_an_untrusted_leaked_by_is_ignored_and_the_bastion_never_planned",),
        check="an-untrusted-leaked-by-is-ignored",
    ),
    Mutation(
        name="--config takes a file others can write, or another user's",
        module="project_file.py",
        original="            if own:\n",
        broken="            if False:\n",
        tests=NOT_YOURS,
        check="a-config-not-yours-is-refused",
    ),
    Mutation(
        name="a discovered file is trusted without the operator",
        module="project_file.py",
        original="            return trust_store.is_trusted(self.path, self.sha256)\n",
        broken="            return True\n",
        tests=(
            COMMITTED,
            f"{TRUST}::test_hard_forward_of_an_untrusted_file_is_ignored_and_named",
            f"{TRUST}::test_an_untrusted_output_is_ignored_and_said_the_report_goes_to_stdout",
        ),
        check={
            COMMITTED: "an-untrusted-command-never-runs",
            f"{TRUST}::test_hard_forward_of_an_untrusted_file_is_ignored_and_named": (
                "an-untrusted-forward-is-ignored"
            ),
            f"{TRUST}::test_an_untrusted_output_is_ignored_and_said_the_report_goes_to_stdout": (
                "an-untrusted-output-is-ignored"
            ),
        },
    ),
    Mutation(
        name="an edited file keeps its trust",
        module="trust_store.py",
        original="    return entry is not None and entry.sha256 == sha256\n",
        broken="    return entry is not None\n",
        tests=(COMMITTED,),
        check="an-edited-file-loses-its-trust",
    ),
    Mutation(
        name="the trust check looks at the path, the reader opens it again",
        module="project_file.py",
        original="    raw = _read_discovered(path) if discovered else _read_named(path, own=own)\n",
        broken=(
            "    check_trusted(path, os.lstat(path)) if discovered else None\n"
            "    raw = path.read_bytes()\n"
        ),
        tests=(f"{OPENS}::test_another_user_swapping_the_file_never_gets_it_read",),
        check="a-swapped-file-is-never-read",
    ),
    Mutation(
        name="the directory a file is in is not considered",
        module="project_file.py",
        original="        check_directory(path, os.fstat(directory))\n",
        broken="        pass\n",
        tests=(f"{OPENS}::test_a_directory_others_can_write_is_refused",),
        check="a-directory-others-write-is-refused",
    ),
    Mutation(
        name="outputs and logs are opened blocking",
        module="private_files.py",
        original="_NOT_BLOCKING = os.O_NONBLOCK | os.O_CLOEXEC\n",
        broken="_NOT_BLOCKING = os.O_CLOEXEC\n",
        tests=(
            f"{OPENS}::test_a_fifo_never_hangs_cloudguard[output]",
            f"{OPENS}::test_a_fifo_never_hangs_cloudguard[check-log]",
        ),  # (the reap log is opened O_RDWR, which a FIFO never blocks: checked by type only)
        check="a-fifo-never-hangs",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_trust_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)

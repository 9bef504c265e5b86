"""Negative controls: break each reaping rule on purpose; each named test must fail at its named
check (harness: tests/cloudguard_mutants.py).

Each control mutates one rule in a copy of the package (the core's `reap/`, or an
adapter's reaper): a rule whose tests stay green when it is broken is not tested.
Each check is one of the named test's own (tests/named_checks.py).
"""

from __future__ import annotations

from pathlib import Path

import cloudguard_aws
import cloudguard_azure
import pytest
from cloudguard_mutants import AWS_SDKS, AZURE_SDKS, Mutation, assert_turns_red

AZURE_PACKAGE = Path(cloudguard_azure.__file__).resolve().parent
AWS_PACKAGE = Path(cloudguard_aws.__file__).resolve().parent
AZURE = "adapters/azure/tests/test_azure_reaper.py"
AZURE_NETWORK = "adapters/azure/tests/test_azure_reaper_network.py"
AZURE_NIC_MOVED = (
    f"{AZURE_NETWORK}::test_a_nic_attached_to_another_vm_after_the_plan_is_skipped_not_deleted"
)
AWS = "adapters/aws/tests/test_aws_reaper.py"
AZURE_KINDS = "adapters/azure/tests/test_azure_reap_kinds.py"
AWS_KINDS = "adapters/aws/tests/test_aws_reap_kinds.py"
AWS_CHANGED = f"{AWS_KINDS}::test_a_resource_that_changed_since_the_plan_is_left_alone"
AZURE_GROUPS = f"{AZURE_KINDS}::test_a_group_whose_members_changed_since_the_plan_is_left_whole"
CORE = "tests/reap"
AZURE_SKIP = f"{AZURE}::test_a_vm_that_changed_since_the_plan_is_skipped_and_left_alone"
AZURE_PROTECTED = f"{AZURE}::test_protection_from_above_or_a_management_lock_skips_the_vm"
SAME_IDENTITY = (
    "    if (item.uid and now.uid.casefold() != item.uid.casefold()) or (\n"
    "        item.created is not None and now.created != item.created\n"
    "    ):\n"
)
RE_CREATED = f"{AZURE}::test_a_vm_re_created_under_its_name_after_the_plan_is_left_alone"
WHOLE_DIGEST = f"{AZURE}::test_only_the_whole_digest_approves"
FUTURE = f"{AZURE}::test_a_plan_or_audit_dated_in_the_future_is_refused"
LOST_DELETE = f"{AZURE_NETWORK}::test_an_irreversible_delete_whose_answer_is_lost_is_not_sent_again"
AWS_FLAG = f"{AWS}::test_termination_or_stop_protection_is_protection"
AZURE_LOCKS = "adapters/azure/tests/test_azure_reap_locks.py"
AZURE_BUDGETS = "adapters/azure/tests/test_azure_reap_budgets.py"
BUDGETS = f"{CORE}/test_reap_budgets.py"
DATA_LISTED = (
    f"{CORE}/test_reap_plan.py::test_a_kind_that_holds_data_is_listed_not_deleted_unless_named"
)
DATA_EDITED = (
    f"{CORE}/test_reap_plan.py::test_a_hand_edited_plan_cannot_delete_data_its_kinds_do_not_name"
)
AWS_EVERY_KIND = (
    f"{AWS_KINDS}::test_every_kind_with_one_clear_delete_is_reaped_and_the_rest_is_said"
)
SPENT_BEFORE_ACTING = (
    f"{BUDGETS}::test_an_item_past_its_budget_is_not_acted_on_and_the_next_goes_on"
)
PAST_DEADLINE = f"{BUDGETS}::test_past_the_deadline_no_item_is_begun_and_the_rest_are_not_reached"
UNFINISHED_ACTION = f"{BUDGETS}::test_an_action_not_seen_to_finish_is_failed_and_the_run_is_75"
WAIT_IN_BUDGET = f"{AZURE_BUDGETS}::test_the_wait_for_a_delete_to_finish_is_inside_the_item_budget"
ONE_DIRECTORY = f"{CORE}/test_reap_locks.py::test_a_login_shell_and_cron_use_one_lock_directory"
LOGIN_AND_CRON = f"{AZURE_LOCKS}::test_a_login_shell_and_cron_applying_one_plan_send_one_delete"


MUTATIONS = [
    # -- re-derivation (reap/verify.py) ------------------------------------------------------
    Mutation(
        name="identity not compared",
        module="reap/verify.py",
        original="if (different := _identity(item, live, cloud)) is not None:",
        broken="if (different := None) is not None:",
        tests=(f"{RE_CREATED}[both]",),
        check="a-re-created-vm-is-left-alone",
    ),
    Mutation(
        name="the unique id not compared, only the creation time",
        module="reap/verify.py",
        original=SAME_IDENTITY,
        broken="    if item.created is not None and now.created != item.created:\n",
        tests=(f"{RE_CREATED}[unique-id]",),
        check="a-re-created-vm-is-left-alone",
    ),
    Mutation(
        name="the creation time not compared, only the unique id",
        module="reap/verify.py",
        original=SAME_IDENTITY,
        broken="    if item.uid and now.uid.casefold() != item.uid.casefold():\n",
        tests=(f"{RE_CREATED}[creation-time]",),
        check="a-re-created-vm-is-left-alone",
    ),
    Mutation(
        name="the live verdict ignored (edited plans)",
        module="reap/verify.py",
        original="    skips += _verdict(item, live_finding)\n",
        broken="    skips += []\n",
        tests=(
            f"{AZURE}::test_edited_plans_cannot_widen_what_is_done",
            f"{AWS}::test_edited_plans_cannot_widen_what_is_done",
        ),
        check="an-edited-plan-cannot-widen",
    ),
    Mutation(
        name="the live verdict ignored (a record appeared)",
        module="reap/verify.py",
        original="    skips += _verdict(item, live_finding)\n",
        broken="    skips += []\n",
        tests=(
            f"{AZURE_SKIP}[record-appeared]",
            f"{CORE}/test_reap_apply.py::test_a_record_that_appears_mid_run_stops_that_item",
        ),
        check={
            f"{AZURE_SKIP}[record-appeared]": "left-alone",
            f"{CORE}/test_reap_apply.py::test_a_record_that_appears_mid_run_stops_that_item": (
                "a-record-that-appeared-stops-it"
            ),
        },
    ),
    Mutation(
        name="the fleet's task tag not required",
        module="reap/verify.py",
        original="    if cloud.tag(current.tags, policy.task_tag) is None:\n",
        broken="    if False:\n",
        tests=(f"{AZURE}::test_edited_plans_cannot_widen_what_is_done",),
        check="an-edited-plan-cannot-widen",
    ),
    Mutation(
        name="the cloud's protections ignored",
        module="reap/verify.py",
        original="    skips += [Skip(PROTECTED, protection) for protection in live.protections]\n",
        broken="    skips += []\n",
        tests=(
            f"{AZURE_PROTECTED}[group-tag]",
            f"{AZURE_PROTECTED}[subscription-tag]",
            f"{AZURE_PROTECTED}[lock-resource]",
            f"{AWS_FLAG}[DisableApiTermination]",
            f"{AWS_FLAG}[DisableApiStop]",
        ),
        check="left-alone",
    ),
    Mutation(
        name="attachment not re-checked",
        module="reap/verify.py",
        original='    if item.kind != "vm" and live.attached_to is not None:',
        broken="    if False:",
        tests=(
            f"{AZURE}::test_a_disk_attached_after_the_plan_is_not_deleted",
            f"{AWS}::test_a_volume_attached_after_the_plan_is_not_deleted",
            AZURE_NIC_MOVED,
        ),
        check={
            f"{AZURE}::test_a_disk_attached_after_the_plan_is_not_deleted": (
                "an-attached-disk-is-kept"
            ),
            f"{AWS}::test_a_volume_attached_after_the_plan_is_not_deleted": (
                "an-attached-volume-is-kept"
            ),
            AZURE_NIC_MOVED: "an-attached-nic-is-kept",
        },
    ),
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
            f"{AZURE_NETWORK}::test_a_protected_public_ip_is_skipped",
        ),
        check="left-alone",
    ),
    Mutation(
        name="a dependent NIC's identity not compared",
        module="reap/verify.py",
        original="        if item.uid and now.uid.casefold() != item.uid.casefold():\n",
        broken="        if False:\n",
        tests=(
            f"{AZURE_NETWORK}::test_a_nic_re_created_under_its_name_is_not_the_one_the_vm_read_saw",
        ),
        check="a-re-created-nic-is-kept",
    ),
    Mutation(
        name="tag comparison always passes",
        module="reap/verify.py",
        original="    if before == after:\n",
        broken="    if True:\n",
        tests=(f"{AZURE_SKIP}[task-retagged]", f"{AZURE_SKIP}[generation-changed]"),
        check="left-alone",
    ),
    Mutation(
        name="unknown tags read as no protection",
        module="reap/verify.py",
        original="    if not current.tags:\n",
        broken="    if False:\n",
        tests=(f"{AZURE_SKIP}[tags-unreadable]",),
        check="the-skip-is-named",
    ),
    Mutation(
        name="a terminated instance is not noticed",
        module="reap/verify.py",
        original='    if live is None or live.resource.power_state == "terminated":\n',
        broken="    if live is None:\n",
        tests=(f"{AWS}::test_an_instance_terminated_since_the_plan_is_gone_not_failed",),
        check="a-terminated-instance-is-gone",
    ),
    Mutation(
        name="a plan that keeps with_dependents without deleting is read",
        module="documents/plan.py",
        original="    if with_dependents and requested != DESTRUCTIVE:\n",
        broken="    if False:\n",
        tests=(
            f"{CORE}/test_reap_plan.py::test_a_hand_edited_plan_cannot_widen_what_reaping_does"
            "[dependents-in-a-deallocate-plan]",
        ),
        check="an-edited-plan-is-refused",
    ),
    Mutation(
        name="controller records taken from stdin, read once for every item",
        module="cli/reap.py",
        original='    if records == "-":\n',
        broken="    if False:\n",
        # and the plan's binding, which refuses the test's stdin first (its audit read a home),
        # left out: an audit may read its records from stdin ("-"), and its plan binds that
        also=(
            (
                "reap/admission.py",
                "    if named == dict(plan.evidence):\n",
                "    if True:\n",
            ),
        ),
        tests=(f"{CORE}/test_reap_apply.py::test_controller_records_from_stdin_are_a_usage_error",),
        check="records-from-a-file-only",
    ),
    Mutation(
        name="a group's unreviewed member not noticed",
        module="reap/verify.py",
        original=(
            "            skips.append(\n                Skip(\n                    GROUP_CHANGED,"
        ),
        broken="            (\n                Skip(\n                    GROUP_CHANGED,",
        tests=(f"{AZURE_GROUPS}[raced-a-resource-in]",),
        check="the-group-is-left-whole",
    ),
    Mutation(
        name="a group's members not re-derived",
        module="reap/verify.py",
        original=(
            "        skips += _members(item, live.members, member_findings or {}, policy, cloud)\n"
        ),
        broken="        skips += []\n",
        tests=tuple(
            f"{AZURE_GROUPS}[{attack}]"
            for attack in (
                "member-re-created",
                "member-locked",
                "member-protected",
                "member-retagged",
            )
        ),
        check="the-group-is-left-whole",
    ),
    # -- the engine: dry run, locks, exit codes ----------------------------------------------
    Mutation(
        name="dry run acts",
        module="reap/apply.py",
        original="    if not execute:\n",
        broken="    if False:\n",
        tests=(
            f"{AZURE}::test_a_dry_run_re_reads_the_vm_and_acts_on_nothing",
            f"{AWS}::test_a_dry_run_stops_nothing",
        ),
        check={
            f"{AZURE}::test_a_dry_run_re_reads_the_vm_and_acts_on_nothing": (
                "a-dry-run-sends-nothing"
            ),
            f"{AWS}::test_a_dry_run_stops_nothing": "a-dry-run-stops-nothing",
        },
    ),
    Mutation(
        name="the plan's lock not honoured",
        module="reap/apply.py",
        original="        if not held.held:\n",
        broken="        if False:\n",
        tests=(f"{AZURE}::test_a_second_apply_of_a_plan_being_applied_does_nothing_but_say_so",),
        check="the-plan-lock-is-honoured",
    ),
    Mutation(
        name="a resource's lock not honoured",
        module="reap/apply.py",
        original="        if not lock.held:\n",
        broken="        if False:\n",
        tests=(f"{AZURE}::test_a_resource_another_apply_holds_is_not_read",),
        check="the-resource-lock-is-honoured",
    ),
    Mutation(
        name="neither lock honoured: two applies at once",
        module="reap/apply.py",
        original="        if not held.held:\n",
        broken="        if False:\n",
        also=(("reap/apply.py", "        if not lock.held:\n", "        if False:\n"),),
        tests=(f"{AZURE}::test_two_applies_racing_send_one_action",),
        check="one-action-for-two-applies",
    ),
    Mutation(
        name="another user's lock directory is trusted",
        module="reap/locks.py",
        original="    if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.geteuid():\n",
        broken="    if not stat.S_ISDIR(status.st_mode):\n",
        tests=(f"{CORE}/test_reap_locks.py::test_another_users_lock_directory_is_refused",),
        check="another-users-lock-directory-refused",
    ),
    Mutation(
        name="the lock directory follows the environment (a login shell's, cron's)",
        module="reap/locks.py",
        original='    return account_home() / ".cache" / "cloudguard" / "reap-locks"\n',
        broken=(
            '    base = os.environ.get("XDG_RUNTIME_DIR") or str(Path.home() / ".cache")\n'
            '    return Path(base) / "cloudguard" / "reap-locks"\n'
        ),
        tests=(ONE_DIRECTORY, LOGIN_AND_CRON),
        check={
            ONE_DIRECTORY: "one-lock-directory-for-every-environment",
            LOGIN_AND_CRON: "one-lock-for-every-environment",
        },
    ),
    Mutation(
        name="no lock in the shared history store: two hosts both act",
        module="cli/reap.py",
        original="    shared = store if store is not None and store.locks_across_hosts else None\n",
        broken="    shared = None\n",
        tests=(f"{AZURE_LOCKS}::test_two_hosts_sharing_a_postgresql_history_send_one_delete",),
        check="one-lock-for-every-host",
    ),
    Mutation(
        name="the store's answer to a lock ignored",
        module="reap/locks.py",
        original="        if taken:\n",
        broken="        if True:\n",
        tests=(f"{AZURE_LOCKS}::test_two_hosts_sharing_a_postgresql_history_send_one_delete",),
        check="one-lock-for-every-host",
    ),
    # -- bounds: the item budget and the apply's deadline -----------------------------------
    Mutation(
        name="an item whose reads spent its budget is acted on",
        module="reap/apply.py",
        original="    if (taken := budget.spent()) is not None:\n",
        broken="    if (taken := None) is not None:\n",
        tests=(SPENT_BEFORE_ACTING,),
        check="an-item-past-its-budget-is-not-acted-on",
    ),
    Mutation(
        name="the apply's deadline ignored",
        module="reap/apply.py",
        original="                if deadline is not None and clock() - began > deadline:\n",
        broken="                if False:\n",
        tests=(PAST_DEADLINE,),
        check="the-deadline-stops-the-apply",
    ),
    Mutation(
        name="an action not seen to finish is a plain failure (1, not 75)",
        module="reap/apply.py",
        original="        return UNFINISHED, live\n",
        broken="        return FAILED, live\n",
        tests=(UNFINISHED_ACTION,),
        check="an-unfinished-action-is-75",
    ),
    Mutation(
        name="azure: an attempt's timeouts not capped at what remains of the budget",
        module="retry.py",
        package=AZURE_PACKAGE,
        original="            options[key] = min(options.get(key) or default, remaining)\n",
        broken="            options[key] = options.get(key) or default\n",
        tests=(f"{AZURE_BUDGETS}::test_an_attempt_started_inside_the_budget_ends_inside_it",),
        check="no-attempt-outlasts-the-item-budget",
    ),
    Mutation(
        name="azure: the wait for the operation outside the item budget (as before)",
        module="reaper.py",
        package=AZURE_PACKAGE,
        original="            wait = min(self._lro_timeout, self._clock.remaining())\n",
        # The action restarting the item's clock, and waiting its own 30 min.
        broken="            self._clock.restart()\n            wait = self._lro_timeout\n",
        tests=(WAIT_IN_BUDGET,),
        check="the-item-budget-covers-the-wait",
    ),
    # -- data is never destroyed by a default ---------------------------------------------
    Mutation(
        name="a kind that holds data planned for delete without --delete-data",
        module="reap/planning.py",
        original="            why = _holds_data_unless_named(item, action, cloud, delete_data)\n",
        broken="            why = None\n",
        tests=(DATA_LISTED,),
        check="data-is-never-deleted-by-a-default",
    ),
    Mutation(
        name="a plan edited to delete data its kinds do not name is read",
        module="documents/plan.py",
        original="            and item.kind not in plan.delete_data\n",
        broken="            and False\n",
        tests=(DATA_EDITED,),
        check="an-edited-plan-cannot-delete-data",
    ),
    Mutation(
        name="aws: the command printed for a bucket deletes its objects (--force)",
        module="reap_kinds.py",
        package=AWS_PACKAGE,
        original='        kinds.BUCKET: f"aws s3 rb s3://{name}",\n',
        broken='        kinds.BUCKET: f"aws s3 rb s3://{name} --force",\n',
        tests=(AWS_EVERY_KIND,),
        check="the-printed-command-deletes-no-data",
    ),
    Mutation(
        name="1 wins over 75",
        module="reap/apply.py",
        original="    if any(counts[kind] for kind in _INCOMPLETE):\n",
        broken="    if False:\n",
        tests=(f"{CORE}/test_reap_log_faults.py::test_75_wins_over_1",),
        check="75-wins-over-1",
    ),
    # -- the log -----------------------------------------------------------------------------
    Mutation(
        name="intent not fsynced",
        module="documents/reap_log.py",
        original="            os.fsync(self._fd)\n",
        broken="            pass\n",
        tests=(
            f"{CORE}/test_reap_log_faults.py::test_the_intent_is_fsynced_before_the_action_is_sent",
        ),
        check="the-intent-is-fsynced-first",
    ),
    Mutation(
        name="a torn line continued",
        module="documents/reap_log.py",
        original='line = b"\\n" + line  # a write died mid-line: keep this record whole\n',
        broken="pass\n",
        tests=(
            f"{CORE}/test_reap_log_faults.py::test_a_torn_line_is_never_continued_by_the_next_record",
        ),
        check="a-torn-line-is-not-continued",
    ),
    Mutation(
        name="a failed log write ignored",
        module="documents/reap_log.py",
        original='raise ReapLogError(f"cannot write reap log {self.path}: {exc}") from exc\n',
        broken="pass\n",
        tests=(
            f"{CORE}/test_reap_log_faults.py::"
            "test_a_log_that_fills_up_mid_run_is_75_and_nothing_is_acted_on_after_it",
            f"{AZURE}::test_a_reap_log_hitting_a_size_limit_mid_run_is_75_and_nothing_is_sent",
            f"{AZURE_KINDS}::test_a_reap_log_that_cannot_take_the_groups_intent_deletes_nothing",
        ),
        check={
            f"{CORE}/test_reap_log_faults.py::"
            "test_a_log_that_fills_up_mid_run_is_75_and_nothing_is_acted_on_after_it": (
                "a-failed-log-write-stops-the-run"
            ),
            f"{AZURE}::test_a_reap_log_hitting_a_size_limit_mid_run_is_75_and_nothing_is_sent": (
                "nothing-after-a-failed-log-write"
            ),
            f"{AZURE_KINDS}::test_a_reap_log_that_cannot_take_the_groups_intent_deletes_nothing": (
                "nothing-after-a-failed-log-write"
            ),
        },
    ),
    # -- reviewed is applied (reap/admission.py) -----------------------------------------------
    Mutation(
        name="approval not compared",
        module="reap/admission.py",
        original='    if given != digest.removeprefix("sha256:"):\n',
        broken="    if False:\n",
        tests=(f"{AZURE}::test_a_plan_changed_since_review_is_refused",),
        check="a-changed-plan-is-refused",
    ),
    Mutation(
        name="a prefix of the digest approves (an empty one too)",
        module="reap/admission.py",
        original='    if given != digest.removeprefix("sha256:"):\n',
        broken='    if not digest.removeprefix("sha256:").startswith(given):\n',
        tests=(
            f"{WHOLE_DIGEST}[empty]",
            f"{WHOLE_DIGEST}[prefix-only]",
            f"{WHOLE_DIGEST}[a-prefix-of-the-digest]",
        ),
        check="only-the-whole-digest-approves",
    ),
    Mutation(
        name="a plan or audit dated in the future is taken as fresh",
        module="reap/admission.py",
        original="    if max(plan.created_at, plan.audit_generated_at) > now + _CLOCK_SKEW:\n",
        broken="    if False:\n",
        tests=(f"{FUTURE}[plan]", f"{FUTURE}[audit]"),
        check="a-future-plan-is-refused",
    ),
    Mutation(
        name="a plan's age counted from the plan, not its audit",
        module="reap/admission.py",
        original="    made = min(plan.created_at, plan.audit_generated_at)\n",
        broken="    made = plan.created_at\n",
        tests=(f"{AZURE}::test_a_fresh_plan_of_an_old_audit_is_as_old_as_its_audit",),
        check="the-audits-age-counts",
    ),
    Mutation(
        name="no plan expiry",
        module="reap/admission.py",
        original="    if now - made > max_age:\n",
        broken="    if False:\n",
        tests=(
            f"{AZURE}::test_a_plan_older_than_max_age_is_refused[option]",
            f"{AZURE}::test_a_plan_older_than_max_age_is_refused[config]",
        ),
        check="an-old-plan-is-refused",
    ),
    Mutation(
        name="allowlist not applied",
        module="reap/admission.py",
        original="outside = [i for i in plan.items if i.account.strip().casefold() not in allowed]",
        broken="outside: list[PlanItem] = []",
        tests=(
            f"{AZURE}::test_yes_needs_an_allowlist_and_an_item_outside_it_is_refused",
            f"{AWS}::test_an_account_outside_the_allowlist_is_refused_before_any_request",
        ),
        check="only-listed-accounts",
    ),
    Mutation(
        name="the evidence the plan binds not compared",
        module="reap/admission.py",
        original="    if named == dict(plan.evidence):\n",
        broken="    if True:\n",
        tests=(f"{AZURE}::test_apply_naming_other_evidence_than_the_plan_binds_is_refused",),
        check="other-evidence-is-refused",
    ),
    Mutation(
        name="apply does not take the retry budget",
        module="settings/core_options.py",
        original="""        apply=Shown(
            "Retry budget per read (429, 5xx, resets, timeouts); actions are never "
            "retried (default: 10).",
            "N",
        ),
""",
        broken="",
        tests=(
            f"{AZURE}::test_apply_takes_the_sweeps_retry_budget",
            f"{AWS}::test_apply_takes_the_sweeps_retry_budget",
        ),
        check="the-retry-budget-is-applied",
    ),
    # -- the adapters' reapers ---------------------------------------------------------------
    Mutation(
        name="azure: the reaper ignores the retry budget",
        module="adapter.py",
        package=AZURE_PACKAGE,
        original="        settings = self._retry or RetrySettings(total=request.retries)\n",
        broken="        settings = self._retry or RetrySettings()\n",
        tests=(f"{AZURE}::test_apply_takes_the_sweeps_retry_budget",),
        check="the-retry-budget-is-applied",
    ),
    Mutation(
        name="azure: no time budget per item",
        module="adapter.py",
        package=AZURE_PACKAGE,
        original="        if request.item_budget is not None:  # reaping: the budget is per item\n",
        broken="        if False:\n",
        tests=(f"{AZURE}::test_an_item_past_its_time_budget_is_unreadable_and_named",),
        check="the-item-budget-stops-its-reads",
    ),
    Mutation(
        name="azure: a NIC's attachment to a VM not read",
        module="network_dependents.py",
        package=AZURE_PACKAGE,
        original="return _ref_id(nic.virtual_machine) or _ref_id(nic.private_endpoint) or None",
        broken="return None",
        tests=(AZURE_NIC_MOVED,),
        check="an-attached-nic-is-kept",
    ),
    Mutation(
        name="azure: a NIC the VM lists is its dependent whichever VM the NIC names",
        module="network_dependents.py",
        package=AZURE_PACKAGE,
        original="        if nic is None or not _same(_ref_id(nic.virtual_machine), vm_id):\n",
        broken="        if nic is None:\n",
        tests=(
            f"{AZURE_NETWORK}::test_a_nic_naming_another_vm_at_the_vms_read_is_not_its_dependent",
        ),
        check="only-a-nic-naming-the-vm-is-its-dependent",
    ),
    Mutation(
        name="azure: an address the NIC lists is its dependent whichever NIC it names",
        module="network_dependents.py",
        package=AZURE_PACKAGE,
        original="_same(_ref_id(address.ip_configuration), str(configuration.id))",
        broken="True",
        tests=(
            f"{AZURE_NETWORK}::"
            "test_a_public_ip_naming_another_nic_at_the_nics_read_is_not_its_dependent",
        ),
        check="only-an-address-naming-the-nic-is-its-dependent",
    ),
    Mutation(
        name="azure: a missing subscription or group read as gone",
        module="reaper.py",
        package=AZURE_PACKAGE,
        original="            if _arm_code(exc) in _GONE_CODES:\n",
        broken="            if True:\n",
        tests=(
            f"{AZURE}::test_a_missing_subscription_or_group_is_unreadable_not_gone[subscription]",
            f"{AZURE}::test_a_missing_subscription_or_group_is_unreadable_not_gone[group]",
        ),
        check="a-missing-scope-is-unreadable",
    ),
    Mutation(
        name="azure: an action re-sent by the retry policy",
        module="reaper.py",
        package=AZURE_PACKAGE,
        original="begin_deallocate(group, name, retry_total=0)",
        broken="begin_deallocate(group, name)",
        tests=(f"{AZURE}::test_an_action_whose_answer_is_lost_is_not_sent_again",),
        check="sent-once",
    ),
    *(
        Mutation(
            name=f"azure: a {kind} delete re-sent by the retry policy",
            module=module,
            package=AZURE_PACKAGE,
            original=f"{call}(group, name, retry_total=0)",
            broken=f"{call}(group, name)",
            tests=(f"{LOST_DELETE}[{kind}]",),
            check="sent-once",
        )
        for kind, module, call in (
            ("vm", "reaper.py", "compute.virtual_machines.begin_delete"),
            ("disk", "reaper.py", "compute.disks.begin_delete"),
            ("nic", "network_dependents.py", "network.network_interfaces.begin_delete"),
            ("public-ip", "network_dependents.py", "network.public_ip_addresses.begin_delete"),
        )
    ),
    Mutation(
        name="azure: a group's delete re-sent by the retry policy",
        module="reaper.py",
        package=AZURE_PACKAGE,
        original="resource_groups.begin_delete(group, retry_total=0)",
        broken="resource_groups.begin_delete(group)",
        tests=(f"{AZURE_KINDS}::test_a_group_delete_whose_answer_is_lost_is_not_sent_again",),
        check="sent-once",
    ),
    Mutation(
        name="azure: a resource deleted by id with an api-version its provider does not list",
        module="reaper.py",
        package=AZURE_PACKAGE,
        original="            self._versions[key] = max(stable or versions)\n",
        broken='            self._versions[key] = "2021-04-01"\n',
        tests=(f"{AZURE_KINDS}::test_by_kind_deletes_each_resource_by_id_then_the_group",),
        check="deleted-with-its-providers-api-version",
    ),
    Mutation(
        name="azure: management locks not read",
        module="reaper.py",
        package=AZURE_PACKAGE,
        original='                for lock in paging.every_item(arm, f"{scope}{_LOCKS}"):\n',
        broken="                for lock in ():\n",
        tests=(
            f"{AZURE_PROTECTED}[lock-subscription]",
            f"{AZURE_PROTECTED}[lock-group]",
            f"{AZURE_PROTECTED}[lock-resource]",
        ),
        check="left-alone",
    ),
    Mutation(
        name="aws: termination and stop protection not read",
        module="reaper.py",
        package=AWS_PACKAGE,
        original="                found.append(meaning)\n",
        broken="                pass\n",
        tests=(f"{AWS_FLAG}[DisableApiTermination]", f"{AWS_FLAG}[DisableApiStop]"),
        check="left-alone",
    ),
    Mutation(
        name="aws: the credentials' account not checked",
        module="reaper.py",
        package=AWS_PACKAGE,
        original="        if item.account != self._account:\n",
        broken="        if False:\n",
        tests=(f"{AWS}::test_credentials_of_another_account_are_unreadable_not_acted_on",),
        check="another-accounts-credentials-unreadable",
    ),
    Mutation(
        name="aws: no time budget per item",
        module="session.py",
        package=AWS_PACKAGE,
        original="            self._deadline = time.monotonic() + self.seconds\n",
        broken="            pass\n",
        tests=(f"{AWS}::test_an_item_past_its_time_budget_is_unreadable_and_named",),
        check="the-item-budget-stops-its-reads",
    ),
    Mutation(
        name="aws: an Elastic IP's association not read",
        module="reap_kinds.py",
        package=AWS_PACKAGE,
        original='    holder = address.get("AssociationId") or address.get("NetworkInterfaceId")\n',
        broken="    holder = None\n",
        tests=(f"{AWS_CHANGED}[address-associated]",),
        check="left-alone",
    ),
    Mutation(
        name="aws: the images a snapshot serves not read",
        module="reap_kinds.py",
        package=AWS_PACKAGE,
        original='            (m.get("Ebs") or {}).get("SnapshotId") == sid\n',
        broken="            False\n",
        tests=(f"{AWS_KINDS}::test_a_snapshot_an_image_uses_is_not_deleted",),
        check="a-snapshot-an-image-uses-is-kept",
    ),
    Mutation(
        name="aws: a load balancer's deletion protection not read",
        module="reap_kinds.py",
        package=AWS_PACKAGE,
        original="    protected = any(\n",
        broken="    protected = False and any(\n",
        tests=(f"{AWS_CHANGED}[balancer-deletion-protection]",),
        check="left-alone",
    ),
    Mutation(
        name="aws: the acting client retries",
        module="reaper.py",
        package=AWS_PACKAGE,
        original='retries={"total_max_attempts": 1, "mode": "standard"}, **timeouts',
        broken='retries={"total_max_attempts": 5, "mode": "standard"}, **timeouts',
        tests=(f"{AWS}::test_the_action_client_never_retries",),
        check="the-acting-client-never-retries",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_a_reaping_rule_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS, (*AWS_SDKS, *AZURE_SDKS))

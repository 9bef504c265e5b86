"""Negative controls for every kind: break a rule on purpose; the named tests must fail at
their named checks (harness: tests/cloudguard_mutants.py)."""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

KINDS = "tests/audit/test_audit_kinds.py"
HEADLINE = (
    f"{KINDS}::test_the_headline_of_every_format_says_how_many_billable_findings_are_unpriced"
)
ONCE = "tests/audit/test_audit_warnings_once.py"
GENERATION = "test_only_the_kinds_that_must_carry_a_generation_are_suspect_without_one"

MUTATIONS = [
    Mutation(
        name="a kind of unknown billing priced as not billable",
        module="audit/cost.py",
        original='    if billing.idle is None:\n        return None, billing.when, None, ""\n',
        broken='    if billing.idle is None:\n        return False, billing.when, 0.0, ""\n',
        tests=(f"{KINDS}::test_every_kind_is_billed_as_its_cloud_says_and_unknown_is_never_zero",),
        check="each-kind-billed-as-its-cloud-says",
    ),
    Mutation(
        name="--kind not applied",
        module="audit/auditor.py",
        original="            if self._kinds is not None and resource.kind not in self._kinds:\n",
        broken="            if False:\n",
        tests=(f"{KINDS}::test_kind_keeps_only_those_kinds_and_the_report_says_which",),
        check="only-the-kinds-asked-for",
    ),
    Mutation(
        name="the headline hides what is unpriced",
        module="audit/formats/summary.py",
        original='        left_out.append(f"{cost.unpriced} of unknown price in neither sum")\n',
        broken="        pass\n",
        tests=tuple(
            f"{HEADLINE}[{fmt}]" for fmt in ("table", "markdown", "junit", "sarif", "html")
        ),
        check="the-headline-counts-the-unpriced",
    ),
    Mutation(
        name="every kind suspect without a generation tag",
        module="audit/classify.py",
        original="        if generation is None and resource.kind in policy.require_generation:\n",
        broken="        if generation is None:\n",
        tests=(f"{KINDS}::{GENERATION}",),
        check="a-kind-not-required-is-not-suspect",
    ),
    Mutation(
        name="--require-generation not applied",
        module="settings/engine_requests.py",
        original='    "require_generation": "require_generation",\n',
        broken="",
        tests=(f"{KINDS}::{GENERATION}",),
        check="the-operator-requires-it-of-a-kind",
    ),
    Mutation(
        name="a group without a creation time warns",
        module="audit/auditor.py",
        original="f.age is None and f.resource.kind != RESOURCE_GROUP]",
        broken="f.age is None]",
        tests=(
            f"{ONCE}::test_a_group_without_a_creation_time_is_no_warning_and_a_vm_without_one_is",
        ),
        check="no-warning-for-a-group-without-a-time",
    ),
    Mutation(
        name="warnings on stderr beside the table that shows them",
        module="cli/audit.py",
        original="    for warning in () if shown else report.warnings:\n",
        broken="    for warning in report.warnings:\n",
        tests=(f"{ONCE}::test_a_table_on_a_terminal_says_each_warning_once",),
        check="each-warning-once",
    ),
    Mutation(
        name="a sum of only unpriced findings shown as a zero",
        module="audit/formats/summary.py",
        original="    if cost.billable and not priced:\n",
        broken="    if False:\n",
        tests=tuple(
            f"{KINDS}::test_a_sum_of_only_unpriced_findings_is_unknown_never_zero_in_every_format"
            f"[{fmt}]"
            for fmt in ("table", "markdown")
        ),
        check="an-unpriced-sum-is-unknown",
    ),
    Mutation(
        name="the bundled table prices no disk",
        module="audit/cost.py",
        original="            if (unit := bundled.get(query.sku.casefold())) is not None:\n",
        broken="            if (unit := None) is not None:\n",
        tests=(
            "tests/audit/test_audit_classify.py::"
            "test_a_managed_disk_is_priced_offline_by_its_tier_a_month_being_730_hours"
            "[Premium_LRS 100 GiB-19.71]",
        ),
        check="a-disk-priced-by-its-tier",
    ),
    Mutation(
        name="any --kind accepted",
        module="cloud/kinds.py",
        original="    if kind in _ORDER or _is_type_name(kind):\n",
        broken="    if True:\n",
        tests=(
            f"{KINDS}::test_an_unknown_kind_is_a_usage_error_on_the_command_line_and_97_in_the_config",
        ),
        check="an-unknown-kind-is-refused",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_a_kinds_rule_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)

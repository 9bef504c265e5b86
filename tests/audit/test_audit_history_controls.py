"""Negative controls: break what the audit remembers and tells on purpose; each named test
must fail at its named check (harness: tests/cloudguard_mutants.py)."""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

HISTORY = "tests/audit/test_audit_history.py"
NOTIFY = "tests/notify/test_audit_notifies.py"

ACKNOWLEDGED_VM = f"{HISTORY}::test_reap_plan_leaves_an_acknowledged_orphan_alone"
ACKNOWLEDGED_MEMBER = (
    f"{HISTORY}::test_every_kind_is_remembered_acknowledged_and_held_out_of_a_group_delete"
)

MUTATIONS = [
    Mutation(
        name="--fail-on new fails on every orphan",
        module="documents/findings.py",
        original="        return news(report, finding) is not None",
        broken="        return finding.verdict in failing_verdicts(report.policy)",
        tests=(f"{HISTORY}::test_fail_on_new_fails_only_on_what_is_new",),
        check="fail-on-new-passes-the-old",
    ),
    Mutation(
        name="an acknowledged finding still fails the audit",
        module="documents/findings.py",
        original="failing_verdicts(report.policy) and not acknowledged(",
        broken="failing_verdicts(report.policy) or not acknowledged(",
        tests=(
            f"{HISTORY}::test_an_acknowledged_orphan_is_shown_and_fails_nothing_until_it_expires",
        ),
        check="an-acknowledged-finding-fails-nothing",
    ),
    Mutation(
        name="a finding's tags sent to the webhooks",
        module="audit/remember.py",
        original="        reasons=finding.reasons,\n        name=r.name,",
        broken="        reasons=(*finding.reasons, *r.tags.values()),\n        name=r.name,",
        tests=(f"{NOTIFY}::test_only_news_is_told",),
        check="no-tag-value-is-sent",
    ),
    Mutation(
        name="reap plan takes an acknowledged orphan",
        module="reap/planning.py",
        original="        if finding.acknowledged is not None:",
        broken="        if False:",
        tests=(ACKNOWLEDGED_VM, ACKNOWLEDGED_MEMBER),
        check={
            ACKNOWLEDGED_VM: "an-acknowledged-orphan-is-not-planned",
            ACKNOWLEDGED_MEMBER: "an-acknowledged-member-holds-its-group",
        },
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_what_the_audit_remembers_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)

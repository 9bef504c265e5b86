"""Re-derivation, rule by rule: every reason not to act, and the one way to go ahead.

The live finding comes from the audit's own classifier (as `reap apply` runs it),
with the policy given here, never the plan's.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from reap_helpers import NOW, resource

from cloudguard.audit.classify import classify
from cloudguard.audit.cost import bundled_prices
from cloudguard.audit.evidence.interface import Evidence
from cloudguard.cloud.reaping import Live
from cloudguard.cloud.records import Resource
from cloudguard.documents.findings import AuditPolicy
from cloudguard.documents.plan import PlanItem
from cloudguard.reap.verify import verify

POLICY = AuditPolicy(leaked_by=(("run-id", "ci-77"),))
TAGS = {"task-id": "cloud-noenv-c7", "repository-generation": "c7" * 20}


def item_for(live: Resource, *, verdict: str = "orphan", action: str = "deallocate") -> PlanItem:
    return PlanItem(
        provider=live.provider,
        account=live.account,
        region=live.region,
        group=live.group,
        id=live.id,
        name=live.name,
        kind=live.kind,
        action=action,
        tags=dict(live.tags),
        verdict=verdict,
        reasons=("no-controller-record",),
        power_state=live.power_state,
        audited_at=NOW,
        leaked_by=(("run-id", "ci-77"),) if verdict == "leaked" else (),
        uid=live.uid,
        created=live.created,
    )


def codes(item: PlanItem, live: Resource | None, tasks: frozenset[str] = frozenset()) -> list[str]:
    finding = (
        None
        if live is None
        else classify(live, Evidence(controller_tasks=tasks), POLICY, bundled_prices(), NOW)
    )
    return [s.code for s in verify(item, None if live is None else Live(live), finding, POLICY)]


def retagged(live: Resource, **tags: str | None) -> Resource:
    new = {**live.tags, **tags}
    return live._replace(tags={k: v for k, v in new.items() if v is not None})


def test_an_unchanged_orphan_may_be_acted_on() -> None:
    live = resource("vm-1", TAGS)
    assert codes(item_for(live), live) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"task-id": "task-0042"}, "task-tag-changed"),
        ({"task-id": None}, "task-tag-changed"),
        ({"repository-generation": "0" * 40}, "generation-changed"),
        ({"repository-generation": None}, "generation-changed"),
        ({"cloudguard-protect": ""}, "protected"),
        ({"DO-NOT-REAP": "anything"}, "protected"),
    ],
)
def test_a_changed_tag_is_a_skip(change: dict[str, str | None], expected: str) -> None:
    live = resource("vm-1", TAGS)
    assert expected in codes(item_for(live), retagged(live, **change))


def test_a_generation_that_appeared_is_a_change_too() -> None:
    planned = resource("vm-1", {"task-id": "t1"})
    assert codes(item_for(planned), retagged(planned, **{"repository-generation": "ab" * 20})) == [
        "generation-changed"
    ]


def test_azure_tag_names_are_case_insensitive_aws_task_tags_exact() -> None:
    azure = resource("vm-1", TAGS)
    assert (
        codes(item_for(azure), azure._replace(tags={k.upper(): v for k, v in TAGS.items()})) == []
    )
    aws = resource("i-1", TAGS, provider="aws")
    renamed = aws._replace(
        tags={"Task-Id": TAGS["task-id"], **{"repository-generation": "c7" * 20}}
    )
    assert {"task-tag-changed", "no-task-tag"} <= set(codes(item_for(aws), renamed))
    # Protection, though, is matched case-insensitively everywhere.
    assert codes(item_for(aws), retagged(aws, **{"Do-Not-Reap": ""})) == ["protected"]


def test_gone_and_terminated_are_gone() -> None:
    live = resource("i-1", TAGS, provider="aws")
    assert codes(item_for(live, action="stop"), None) == ["gone"]
    assert codes(item_for(live, action="stop"), live._replace(power_state="terminated")) == ["gone"]


def test_no_tags_at_all_is_unreadable_not_unprotected() -> None:
    live = resource("vm-1", TAGS)
    assert codes(item_for(live), live._replace(tags={})) == ["tags-unreadable"]


def test_a_controller_record_that_appeared_is_a_skip() -> None:
    live = resource("vm-1", TAGS)
    assert codes(item_for(live), live, frozenset({"cloud-noenv-c7"})) == ["verdict-changed"]
    assert codes(item_for(live), live, frozenset({"another-task"})) == []


def test_a_leaked_item_needs_its_leaked_by_tag_still() -> None:
    live = resource("vm-1", {**TAGS, "run-id": "ci-77"})
    item = item_for(live, verdict="leaked")
    assert codes(item, live) == []
    assert codes(item, retagged(live, **{"run-id": None})) == ["verdict-changed"]
    assert codes(item, retagged(live, **{"run-id": "ci-78"})) == ["verdict-changed"]


@pytest.mark.parametrize(
    ("action", "power", "expected"),
    [
        ("deallocate", "deallocated", ["already-done"]),
        ("deallocate", "deallocating", ["already-done"]),
        ("deallocate", "stopped", []),  # stopped in the OS still bills: deallocate it
        ("stop", "stopped", ["already-done"]),
        ("delete", "deallocated", []),
    ],
)
def test_an_action_already_done_is_a_skip(action: str, power: str, expected: list[str]) -> None:
    provider = "aws" if action == "stop" else "azure"
    live = resource("vm-1", TAGS, provider=provider)
    assert codes(item_for(live, action=action), live._replace(power_state=power)) == expected


def test_another_resource_answering_is_a_skip() -> None:
    live = resource("vm-1", TAGS)
    assert codes(item_for(live), live._replace(id=live.id + "-2")) == ["not-the-planned-resource"]
    assert codes(item_for(live), live._replace(kind="disk")) == ["not-the-planned-resource"]


def test_a_leaked_vm_stays_leaked_whatever_the_controller_says() -> None:
    """Leaked means "whatever the controller says"; an orphan with a record is not one."""
    live = resource("vm-1", {**TAGS, "run-id": "ci-77"})
    known = frozenset({"cloud-noenv-c7"})
    leaked = item_for(live, verdict="leaked")
    assert codes(replace(leaked, controller_record="found"), live, known) == []
    assert codes(item_for(live), live, known) == ["verdict-changed"]  # planned orphan: now leaked


def test_the_plan_cannot_say_what_the_classifier_did_not() -> None:
    """Edited plans: a claimed record, another verdict, no task tag: the live verdict decides."""
    live = resource("vm-1", TAGS)
    known = frozenset({"cloud-noenv-c7"})
    assert codes(replace(item_for(live), controller_record="found"), live, known) == [
        "verdict-changed"
    ]
    assert codes(item_for(live, verdict="leaked"), live) == ["verdict-changed"]
    stray = resource("vm-2", {"run-id": "ci-77"})  # leaked by tag, but not the fleet's
    assert codes(item_for(stray, verdict="leaked"), stray) == ["no-task-tag"]


def test_a_vm_re_created_under_its_name_is_not_the_planned_one() -> None:
    live = resource("vm-1", TAGS)
    again = live._replace(uid="uid-new", created=NOW)
    assert codes(item_for(live), again) == ["not-the-planned-resource"]
    # Each identity the plan names must match: a unique id alone, a creation time alone.
    assert codes(replace(item_for(live), created=None), again) == ["not-the-planned-resource"]
    assert codes(replace(item_for(live), uid=""), again) == ["not-the-planned-resource"]
    assert codes(replace(item_for(live), uid=""), live) == []
    # A plan naming neither does not say which resource it reviewed.
    assert codes(replace(item_for(live), uid="", created=None), live) == ["identity-unknown"]
    # A live resource without the identity the plan names cannot be compared.
    assert codes(item_for(live), live._replace(uid="")) == ["identity-unknown"]


def _dependent_nic(live_uid: str, seen_uid: str) -> tuple[PlanItem, Resource]:
    """A NIC its VM's read named (with `seen_uid`), read again now (with `live_uid`)."""
    live = resource("vm-1-nic", TAGS)._replace(kind="nic", created=None, uid=live_uid)
    item = replace(item_for(live, action="delete"), uid=seen_uid, created=None, dependent_of="vm-1")
    return item, live


def test_a_dependent_nic_must_be_the_one_its_vms_read_saw() -> None:
    assert codes(*_dependent_nic("guid-1", "guid-1")) == []
    assert codes(*_dependent_nic("guid-2", "guid-1")) == ["not-the-planned-resource"]
    assert codes(*_dependent_nic("", "guid-1")) == ["not-the-planned-resource"]
    assert codes(*_dependent_nic("guid-1", "")) == ["identity-unknown"]


def test_a_dependent_attached_to_something_is_a_skip() -> None:
    item, live = _dependent_nic("guid-1", "guid-1")
    finding = classify(live, Evidence(controller_tasks=frozenset()), POLICY, bundled_prices(), NOW)
    skips = verify(item, Live(live, attached_to="/subscriptions/s/.../vm-2"), finding, POLICY)
    assert [(s.code, s.detail) for s in skips] == [
        ("attached", "is attached to /subscriptions/s/.../vm-2")
    ]

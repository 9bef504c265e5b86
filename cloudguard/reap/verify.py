"""Re-verification: may this planned item be acted on, given what is true now?

The plan is a snapshot; between it and apply a VM can be claimed by the
controller, retagged, protected, deallocated or deleted. `verify` compares
the live resource with the snapshot and the controller evidence read at
apply time, and returns every reason not to act. An empty answer is the
only "go". When in doubt it says no: tags that cannot be read are a skip,
never "no protection tag" (aws-nuke #612, cloud-nuke #1140).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cloudguard.audit.findings import LEAKED
from cloudguard.audit.model import Resource
from cloudguard.reap.model import PlanItem, PlanPolicy, protection_tag, tag_value

# Skip codes (in the log and the docs).
GONE = "gone"
NOT_THE_SAME_RESOURCE = "not-the-planned-resource"
TAGS_UNREADABLE = "tags-unreadable"
PROTECTED = "protected"
TASK_TAG_CHANGED = "task-tag-changed"
GENERATION_CHANGED = "generation-changed"
CONTROLLER_RECORD = "controller-record"
LEAKED_TAG_GONE = "leaked-tag-gone"
ALREADY_DONE = "already-done"

# Power states in which an action has nothing left to do (or is under way).
_ALREADY = {
    "deallocate": {"deallocating", "deallocated"},
    "stop": {"stopping", "stopped"},
}


@dataclass(frozen=True)
class Skip:
    code: str
    detail: str


def verify(
    item: PlanItem,
    current: Resource | None,
    policy: PlanPolicy,
    controller_tasks: frozenset[str],
) -> tuple[Skip, ...]:
    """Every reason not to act on `item` now; empty means it may be acted on."""
    if current is None or current.power_state == "terminated":
        return (Skip(GONE, "no longer exists"),)
    if current.id.casefold() != item.id.casefold() or current.kind != item.kind:
        return (
            Skip(NOT_THE_SAME_RESOURCE, f"the provider answered with {current.kind} {current.id}"),
        )
    if not current.tags:
        # A resource the fleet tagged has tags; none at all means they were not
        # returned (or were all removed): owner and protection are unknown.
        return (
            Skip(TAGS_UNREADABLE, "no tags came back: its owner and protection cannot be checked"),
        )
    skips: list[Skip] = []
    if (protected := protection_tag(current.tags)) is not None:
        skips.append(Skip(PROTECTED, f"carries protection tag {protected!r}"))
    skips += _changed(item, current.tags, policy.task_tag, TASK_TAG_CHANGED)
    skips += _changed(item, current.tags, policy.generation_tag, GENERATION_CHANGED)
    if item.controller_record != "found":
        # The planned task id and the live one (they differ only if retagged: a skip too).
        tasks = {tag_value(item.provider, t, policy.task_tag) for t in (item.tags, current.tags)}
        for task in sorted(t for t in tasks if t is not None and t in controller_tasks):
            skips.append(
                Skip(CONTROLLER_RECORD, f"the controller now has a record of task {task!r}")
            )
    if item.verdict == LEAKED:
        for key, value in item.leaked_by:
            if tag_value(item.provider, current.tags, key) != value:
                skips.append(
                    Skip(LEAKED_TAG_GONE, f"no longer carries leaked-by tag {key}={value}")
                )
    if current.power_state in _ALREADY.get(item.action, ()):
        skips.append(Skip(ALREADY_DONE, f"already {current.power_state}"))
    return tuple(skips)


def _changed(item: PlanItem, now: Mapping[str, str], name: str, code: str) -> list[Skip]:
    before = tag_value(item.provider, item.tags, name)
    after = tag_value(item.provider, now, name)
    if before == after:
        return []
    return [Skip(code, f"tag {name!r} was {_shown(before)}, now {_shown(after)}")]


def _shown(value: str | None) -> str:
    return "absent" if value is None else repr(value)

"""Re-derivation: may this planned item be acted on, given what is true now?

The plan is a list of candidates, never a source of truth: anyone who can
write the file can edit it. So the verdict is derived again, live: the
resource as its provider answers now, classified by the audit's own
classifier with evidence read now and a policy from configuration and the
command line (`live_finding`, passed in). The plan only narrows: its
snapshot (identity, verdict, tags) must still agree, or the item is
skipped. `verify` returns every reason not to act; an empty answer is the
only "go". When in doubt it says no: tags that cannot be read are a skip,
never "no protection tag" (aws-nuke #612, cloud-nuke #1140).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from cloudguard.cloud.adapter_registry import installed_clouds
from cloudguard.cloud.cloud import Cloud
from cloudguard.cloud.reaping import GROUP_CHANGED, Live, protection_tag
from cloudguard.documents.findings import AuditPolicy, Finding
from cloudguard.documents.plan import REAPABLE_VERDICTS, PlanItem

# Skip codes (in the log and the docs).
GONE = "gone"
NOT_THE_SAME_RESOURCE = "not-the-planned-resource"
IDENTITY_UNKNOWN = "identity-unknown"
TAGS_UNREADABLE = "tags-unreadable"
PROTECTED = "protected"
NO_TASK_TAG = "no-task-tag"
VERDICT_CHANGED = "verdict-changed"
TASK_TAG_CHANGED = "task-tag-changed"
GENERATION_CHANGED = "generation-changed"
ATTACHED = "attached"
ALREADY_DONE = "already-done"
LOCKED = "locked"  # another apply holds this resource (set by the engine)
# GROUP_CHANGED (cloudguard.cloud.reaping): a resource group holds what the plan did not review

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
    live: Live | None,
    live_finding: Finding | None,
    policy: AuditPolicy,
    cloud: Cloud | None = None,
    member_findings: Mapping[str, Finding | None] | None = None,
) -> tuple[Skip, ...]:
    """Every reason not to act on `item` now; empty means it may be acted on.

    `live_finding` is the audit classifier's finding for `live` with evidence
    read now (None: the classifier says it is not the fleet's); `policy` is
    apply's own (configuration and command line), never the plan's; `cloud` is
    `item`'s (its tag-name case, whether its ids are reused; default: the installed).
    A resource group (`live.members`) is judged by what it holds: each member now must
    be one the plan reviewed, and pass these same checks with its finding in
    `member_findings` (by casefolded id).
    """
    cloud = cloud or installed_clouds().cloud(item.provider)
    if live is None or live.resource.power_state == "terminated":
        return (Skip(GONE, "no longer exists"),)
    current = live.resource
    if current.id.casefold() != item.id.casefold() or current.kind != item.kind:
        return (
            Skip(NOT_THE_SAME_RESOURCE, f"the provider answered with {current.kind} {current.id}"),
        )
    if live.members is not None:
        # A group records no identity of its own: it is what it holds (checked below).
        pass
    elif (different := _identity(item, live, cloud)) is not None:
        return (different,)
    if not current.tags:
        # A resource the fleet tagged has tags; none at all means they were not
        # returned (or were all removed): owner and protection are unknown.
        return (
            Skip(TAGS_UNREADABLE, "no tags came back: its owner and protection cannot be checked"),
        )
    skips: list[Skip] = []
    if (protected := protection_tag(current.tags)) is not None:
        skips.append(Skip(PROTECTED, f"carries protection tag {protected!r}"))
    skips += [Skip(PROTECTED, protection) for protection in live.protections]
    if cloud.tag(current.tags, policy.task_tag) is None:
        skips.append(Skip(NO_TASK_TAG, f"does not carry the fleet's task tag {policy.task_tag!r}"))
    skips += _verdict(item, live_finding)
    skips += _changed(cloud, item, current.tags, policy.task_tag, TASK_TAG_CHANGED)
    skips += _changed(cloud, item, current.tags, policy.generation_tag, GENERATION_CHANGED)
    if item.kind != "vm" and live.attached_to is not None:  # a disk, NIC or public IP
        skips.append(Skip(ATTACHED, f"is attached to {live.attached_to}"))
    if current.power_state in _ALREADY.get(item.action, ()):
        skips.append(Skip(ALREADY_DONE, f"already {current.power_state}"))
    if live.members is not None:
        skips += _members(item, live.members, member_findings or {}, policy, cloud)
    return tuple(skips)


def _members(
    group: PlanItem,
    members: tuple[Live, ...],
    findings: Mapping[str, Finding | None],
    policy: AuditPolicy,
    cloud: Cloud,
) -> list[Skip]:
    """Deleting a group deletes all it holds: each member must be reviewed and reapable now."""
    reviewed = {member.id.casefold(): member for member in group.members}
    skips: list[Skip] = []
    for member in members:
        key = member.resource.id.casefold()
        planned = reviewed.get(key)
        if planned is None:
            skips.append(
                Skip(
                    GROUP_CHANGED,
                    f"holds {member.resource.kind} {member.resource.id}, which the plan did "
                    "not review: deleting the group would delete it",
                )
            )
            continue
        for skip in verify(planned, member, findings.get(key), policy, cloud):
            if skip.code == ATTACHED and _held_by(member, members):
                continue  # attached to what the group holds: they go together
            skips.append(Skip(skip.code, f"its {planned.kind} {planned.name}: {skip.detail}"))
    return skips


def _held_by(member: Live, members: tuple[Live, ...]) -> bool:
    """`member` is attached to another member of its group (a disk to its VM)."""
    holder = (member.attached_to or "").casefold()
    return any(m.resource.id.casefold() in holder for m in members if m is not member)


def _identity(item: PlanItem, live: Live, cloud: Cloud) -> Skip | None:
    """The very resource that was reviewed, not another one that took its name."""
    if cloud.ids_never_reused:
        return None  # the id matched above, and it is never given to another resource
    now = live.resource
    if item.dependent_of:
        # Named by its parent's live read a moment ago. A disk has no identity beyond that;
        # a NIC or public IP must still be the one that read saw (same resourceGuid).
        if item.kind != "disk" and not item.uid:
            return Skip(IDENTITY_UNKNOWN, "its parent's read saw no unique id for it")
        if item.uid and now.uid.casefold() != item.uid.casefold():
            return Skip(
                NOT_THE_SAME_RESOURCE,
                f"re-created since its parent's read: unique id {now.uid or 'none'} "
                f"(seen as {item.uid})",
            )
        return None
    # The plan names the reviewed resource by its unique id, its creation time, or both
    # (ARM lists most types with a creation time and no unique id; Resource Graph the
    # reverse): each it names must be the live resource's.
    if not item.uid and item.created is None:
        return Skip(
            IDENTITY_UNKNOWN,
            "the plan does not say which resource it reviewed (no unique id and creation time): "
            "make a new plan from a new audit",
        )
    if (item.uid and not now.uid) or (item.created is not None and now.created is None):
        return Skip(IDENTITY_UNKNOWN, "the provider returned no unique id or creation time")
    if (item.uid and now.uid.casefold() != item.uid.casefold()) or (
        item.created is not None and now.created != item.created
    ):
        return Skip(
            NOT_THE_SAME_RESOURCE,
            f"re-created since the plan: unique id {now.uid or 'none'}, created "
            f"{_when(now.created)} (planned {item.uid or 'none'}, created {_when(item.created)})",
        )
    return None


def _when(moment: datetime | None) -> str:
    return moment.isoformat() if moment is not None else "unknown"


def _verdict(item: PlanItem, finding: Finding | None) -> list[Skip]:
    if finding is None:
        return [Skip(VERDICT_CHANGED, "the audit's classifier no longer counts it as the fleet's")]
    why = f" ({', '.join(finding.reasons)})" if finding.reasons else ""
    if finding.verdict not in REAPABLE_VERDICTS:
        return [Skip(VERDICT_CHANGED, f"is {finding.verdict} now{why}, never reapable")]
    if finding.verdict != item.verdict:
        return [Skip(VERDICT_CHANGED, f"is {finding.verdict} now{why}; planned as {item.verdict}")]
    return []


def _changed(
    cloud: Cloud, item: PlanItem, now: Mapping[str, str], name: str, code: str
) -> list[Skip]:
    before = cloud.tag(item.tags, name)
    after = cloud.tag(now, name)
    if before == after:
        return []
    return [Skip(code, f"tag {name!r} was {_shown(before)}, now {_shown(after)}")]


def _shown(value: str | None) -> str:
    return "absent" if value is None else repr(value)

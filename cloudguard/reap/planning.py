"""Making a reap plan, offline, from an audit report: which findings to act on, and how.

`build_plan` reads the report (cloudguard.documents.audit_report, strictly),
selects the reapable findings of the verdicts asked for, and names each
one's action in its cloud's own verb (`Cloud.action_for`). It never touches
the cloud; what it leaves alone is listed with why. The plan is written and
read back by cloudguard.documents.plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from cloudguard.cloud import kinds
from cloudguard.cloud.adapter_registry import Clouds, installed_clouds
from cloudguard.cloud.cloud import Cloud
from cloudguard.cloud.reaping import REQUESTED_ACTIONS, REVERSIBLE, protection_tag
from cloudguard.cloud.records import Resource
from cloudguard.documents.audit_report import ReadReport, ReportedFinding, read_report
from cloudguard.documents.findings import LEAKED, VERDICTS
from cloudguard.documents.plan import (
    HOLDS_DATA_UNKNOWN,
    REAPABLE_VERDICTS,
    NotPlanned,
    Plan,
    PlanItem,
    PlanPolicy,
    PlanUsageError,
)

# Why a finding of a cloud whose ids are reused (an Azure VM re-created under its name has
# its id) is left out when its audit did not record which resource it saw: apply would skip
# it anyway (identity-unknown), after a review that could not have known.
NO_IDENTITY = (
    "the audit does not say which resource it saw (neither a unique id, e.g. vmId, nor a "
    "creation time in its inventory): apply could not tell it from one re-created under its name"
)

# Power states in which the reversible action has nothing left to do.
_ALREADY_OFF = {"deallocate": {"deallocated"}, "stop": {"stopped"}}


def check_verdicts(verdicts: Sequence[str]) -> tuple[str, ...]:
    for verdict in verdicts:
        if verdict not in VERDICTS:
            raise PlanUsageError(f"unknown verdict {verdict!r} (verdicts: {', '.join(VERDICTS)})")
        if verdict not in REAPABLE_VERDICTS:
            raise PlanUsageError(
                f"verdict {verdict!r} is never reapable (only {', '.join(REAPABLE_VERDICTS)}): "
                "a suspect has a controller record, a pending VM may get one, an unverified "
                "one was never checked, an ok one is known"
            )
    return tuple(dict.fromkeys(verdicts)) or REAPABLE_VERDICTS


def build_plan(
    audit: Any,
    *,
    source: str,
    verdicts: Sequence[str],
    requested_action: str,
    now: datetime,
    with_dependents: bool = False,
    clouds: Clouds | None = None,
    by_kind: bool = False,
    delete_data: Sequence[str] = (),
) -> Plan:
    """The plan for `audit` (a parsed `cloudguard.audit` document), in the verbs of
    `clouds` (default: the installed). An acknowledged finding is not planned. A kind
    that holds data is deleted only when `delete_data` names it; otherwise it is listed
    in `not_planned`, with why."""
    if requested_action not in REQUESTED_ACTIONS:
        raise PlanUsageError(
            f"unknown action {requested_action!r} (choose {' or '.join(REQUESTED_ACTIONS)})"
        )
    if with_dependents and requested_action == REVERSIBLE:
        raise PlanUsageError("--with-dependents deletes what a delete leaves: use --action delete")
    wanted = check_verdicts(verdicts)
    # Every finding, whatever its verdict: a group is deleted whole only if all it holds is.
    report = read_report(audit, source)
    if report.evidence_sources is None:
        raise PlanUsageError(
            f"{source} does not say where its evidence was read from (an audit report from "
            "before plans bound it): run the audit again, then plan from its report"
        )
    clouds = clouds or installed_clouds()
    policy = report.policy
    items: list[PlanItem] = []
    skipped: list[NotPlanned] = []
    for finding in report.findings:
        if finding.verdict not in wanted:
            continue
        cloud = clouds.cloud(finding.resource.provider)
        item = _item(finding, report.generated_at, policy, cloud)
        action = cloud.action_for(item.kind, requested_action)
        why = _not_planned_because(item, action, cloud, finding.resource)
        if finding.acknowledged is not None:  # known and owned: not for reaping until it lapses
            why = finding.acknowledged
        if why is None and action is not None:
            why = _holds_data_unless_named(item, action, cloud, delete_data)
        if why is not None or action is None:
            skipped.append(NotPlanned(item.id, item.name, item.verdict, why or "no action"))
            continue
        holds = HOLDS_DATA_UNKNOWN if cloud.holds_data(item.kind) else ""
        items.append(replace(item, action=action, holds_data=holds))
    items = _whole_groups(items, report, skipped, by_kind=by_kind)
    items.sort(key=lambda i: kinds.order_of(i.kind))  # a VM before its NIC, groups last
    return Plan(
        created_at=now,
        audit_generated_at=report.generated_at,
        audit_source=source,
        requested_action=requested_action,
        verdicts=wanted,
        policy=policy,
        items=tuple(items),
        not_planned=tuple(skipped),
        with_dependents=with_dependents,
        evidence=report.evidence_sources,
        delete_data=tuple(dict.fromkeys(delete_data)),
    )


def _holds_data_unless_named(
    item: PlanItem, action: str, cloud: Cloud, delete_data: Sequence[str]
) -> str | None:
    """Data is never destroyed by a default: a delete of a kind that holds data is planned
    only when the operator named the kind. The audit does not count what it holds (a
    storage account's blobs, a bucket's objects), so the plan says it does not know."""
    if not cloud.holds_data(item.kind) or not cloud.is_destructive(item.kind, action):
        return None
    if item.kind in delete_data:
        return None
    return (
        f"holds data: {HOLDS_DATA_UNKNOWN} (a {item.provider} {item.kind}); listed, not "
        f"deleted: to delete what it holds, plan with --delete-data {item.kind}"
    )


def _item(
    finding: ReportedFinding, audited_at: datetime, policy: PlanPolicy, cloud: Cloud
) -> PlanItem:
    r = finding.resource
    carried: tuple[tuple[str, str], ...] = ()
    if finding.verdict == LEAKED:
        carried = tuple((k, v) for k, v in policy.leaked_by if cloud.tag(r.tags, k) == v)
    return PlanItem(
        provider=r.provider,
        account=r.account,
        region=r.region,
        group=r.group,
        id=r.id,
        name=r.name,
        kind=r.kind,
        action="",
        tags=r.tags,
        verdict=finding.verdict,
        reasons=finding.reasons,
        power_state=r.power_state,
        audited_at=audited_at,
        leaked_by=carried,
        controller_record=finding.controller_record,
        uid=r.uid,
        created=r.created,
    )


def _whole_groups(
    items: list[PlanItem],
    report: ReadReport,
    skipped: list[NotPlanned],
    *,
    by_kind: bool,
) -> list[PlanItem]:
    """A resource group planned for delete carries what it holds (the report's findings in
    it) as its reviewed members, and is deleted whole only when each of them is planned
    too; then (unless `by_kind`) they go with it rather than one by one. A group holding
    anything that is not planned (suspect, protected, ...), or anything that is not the
    fleet's at all (the report's `others_in_groups`), is not planned: its reapable members
    stay items of their own (apply could only refuse the group: `group-changed`)."""
    findings = report.findings
    others = {(o.provider, o.account.casefold(), o.group.casefold()): o
              for o in report.others_in_groups or ()}  # fmt: skip
    planned = {(i.provider, i.id.casefold()): i for i in items}
    held: dict[tuple[str, str, str], list[ReportedFinding]] = {}
    for finding in findings:
        r = finding.resource
        if r.kind != kinds.RESOURCE_GROUP and r.group:
            held.setdefault((r.provider, r.account.casefold(), r.group.casefold()), []).append(
                finding
            )
    kept: list[PlanItem] = []
    folded: set[tuple[str, str]] = set()
    for item in items:
        if item.kind != kinds.RESOURCE_GROUP:
            kept.append(item)
            continue
        where = (item.provider, item.account.casefold(), item.name.casefold())
        if (other := others.get(where)) is not None:
            why = (
                f"holds {other.held} resource(s) that are not the fleet's (e.g. {other.example}), "
                "which deleting the group would delete: the group is not deleted whole, its "
                "members are planned one by one"
            )
            skipped.append(NotPlanned(item.id, item.name, item.verdict, why))
            continue
        inside = held.get(where, [])
        members = [planned.get((f.resource.provider, f.resource.id.casefold())) for f in inside]
        blocker = next((f for f, m in zip(inside, members, strict=True) if m is None), None)
        if blocker is not None:
            why = (
                f"holds {blocker.resource.kind} {blocker.resource.name} ({blocker.verdict}), "
                "which is not reaped: the group is not deleted whole"
            )
            skipped.append(NotPlanned(item.id, item.name, item.verdict, why))
            continue
        reviewed = tuple(m for m in members if m is not None)
        kept.append(replace(item, members=reviewed))
        folded |= {(m.provider, m.id.casefold()) for m in reviewed}
    if by_kind:
        return kept
    return [i for i in kept if (i.provider, i.id.casefold()) not in folded]


def _not_planned_because(
    item: PlanItem, action: str | None, cloud: Cloud, resource: Resource
) -> str | None:
    if not cloud.actions(item.kind):
        command = cloud.delete_command(resource)
        how = (
            f": to delete it, run `{command}`"
            if command
            else ": cloudguard knows no command that deletes it"
        )
        if cloud.holds_data(item.kind):
            # What it holds where the sweep could say cheaply (an S3 bucket: "3 objects",
            # "at least 1000 objects", in its size); else unknown.
            counted = resource.size if resource.size.endswith(" objects") else ""
            how += (
                f"; it holds data ({counted or HOLDS_DATA_UNKNOWN + ' how much'}): empty it "
                "deliberately, after looking at what it holds (the command deletes no data)"
            )
        return f"not reaped by cloudguard (a {item.provider} {item.kind}){how}"
    if action is None:
        return f"a {item.kind} has no reversible action (use --action delete)"
    if (protected := protection_tag(item.tags)) is not None:
        return f"protected by tag {protected!r}"
    if item.verdict == LEAKED and not item.leaked_by:
        return "leaked, but carries none of the audit's --leaked-by tags"
    if item.power_state in _ALREADY_OFF.get(action, ()):
        return f"already {item.power_state}: nothing to {action}"
    if item.power_state == "terminated":
        return "already terminated"
    # As apply judges it (reap/verify.py): a unique id or a creation time names the resource
    # reviewed; a group has neither and is what it holds.
    unnamed = not item.uid and item.created is None and item.kind != kinds.RESOURCE_GROUP
    if unnamed and not cloud.ids_never_reused:
        return NO_IDENTITY
    return None

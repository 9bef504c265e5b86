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

from cloudguard.cloud.cloud import Cloud
from cloudguard.cloud.reaping import REQUESTED_ACTIONS, REVERSIBLE, protection_tag
from cloudguard.cloud.registry import Clouds, installed_clouds
from cloudguard.documents.audit_report import ReportedFinding, read_report
from cloudguard.documents.findings import LEAKED, VERDICTS
from cloudguard.documents.plan import (
    REAPABLE_VERDICTS,
    NotPlanned,
    Plan,
    PlanItem,
    PlanPolicy,
    PlanUsageError,
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
) -> Plan:
    """The plan for `audit` (a parsed `cloudguard.audit` document), in the verbs of
    `clouds` (default: the installed). An acknowledged finding is not planned."""
    if requested_action not in REQUESTED_ACTIONS:
        raise PlanUsageError(
            f"unknown action {requested_action!r} (choose {' or '.join(REQUESTED_ACTIONS)})"
        )
    if with_dependents and requested_action == REVERSIBLE:
        raise PlanUsageError("--with-dependents deletes what a delete leaves: use --action delete")
    wanted = check_verdicts(verdicts)
    report = read_report(audit, source, verdicts=wanted)
    clouds = clouds or installed_clouds()
    policy = report.policy
    items: list[PlanItem] = []
    skipped: list[NotPlanned] = []
    for finding in report.findings:
        cloud = clouds.cloud(finding.resource.provider)
        item = _item(finding, report.generated_at, policy, cloud)
        action = cloud.action_for(item.kind, requested_action)
        why = _not_planned_because(item, action, cloud)
        if finding.acknowledged is not None:  # known and owned: not for reaping until it lapses
            why = finding.acknowledged
        if why is not None or action is None:
            skipped.append(NotPlanned(item.id, item.name, item.verdict, why or "no action"))
            continue
        items.append(replace(item, action=action))
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


def _not_planned_because(item: PlanItem, action: str | None, cloud: Cloud) -> str | None:
    if not cloud.actions(item.kind):
        return f"cloudguard cannot reap a {item.provider} {item.kind}"
    if action is None:
        return (
            f"a {item.kind} has no reversible action; it bills while it exists "
            "(use --action delete)"
        )
    if (protected := protection_tag(item.tags)) is not None:
        return f"protected by tag {protected!r}"
    if item.verdict == LEAKED and not item.leaked_by:
        return "leaked, but carries none of the audit's --leaked-by tags"
    if item.power_state in _ALREADY_OFF.get(action, ()):
        return f"already {item.power_state}: nothing to {action}"
    if item.power_state == "terminated":
        return "already terminated"
    return None

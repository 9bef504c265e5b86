"""The audit report, schema `cloudguard.audit` version 2 (docs/audit.md): writer and reader.

Bump SCHEMA_VERSION when a field is removed or changes meaning; adding a
field does not bump it. Values are exact (tag values are not shortened).
Version 2 (the history, docs/history.md): `exit_code` no longer counts
acknowledged findings and may count only new ones (`policy.fail_on` "new");
each finding says what changed since the last audit (`history`) and whose
acknowledgement covers it (`acknowledgement`); the head says what is gone.

Written as it is encoded: the head of the document indented, then one
finding a line, each encoded by the C encoder (`indent=2` would force the
pure-Python one, which dominated a 100,000-VM report's time).

Read back strictly (`read_report`), as `cloudguard reap plan` reads it: each
field it takes is checked and named when wrong; fields added since (and the
ones a plan does not need) are not required, so a version 1 report still
reads (it acknowledges nothing).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, TextIO

from cloudguard.acknowledgements import AckState
from cloudguard.cloud.kinds import VM
from cloudguard.cloud.records import Resource
from cloudguard.documents.finding_lines import FindingLines
from cloudguard.documents.findings import (
    VERDICTS,
    AuditPolicy,
    AuditReport,
    Finding,
    GroupOthers,
    ReportHistory,
    exit_code,
    leaked_by_text,
    parse_leaked_by,
    spend,
)
from cloudguard.documents.strict_json import DocumentError, StrictReader, read_json_file
from cloudguard.escape import one_line
from cloudguard.history.store_records import BACK, GONE, NEW, STILL
from cloudguard.schemas import schema_id

SCHEMA = "cloudguard.audit"
SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)

# -- writing ---------------------------------------------------------------------------


def report_document(report: AuditReport) -> dict[str, Any]:
    findings = [finding_document(f, report) for f in report.findings]
    return {**report_head(report), "findings": findings}


def report_head(report: AuditReport) -> dict[str, Any]:
    """Everything but the findings."""
    cost = spend(report.findings)
    return {
        "$schema": schema_id("audit-report"),
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "generated_at": report.generated_at.isoformat(),
        "exit_code": exit_code(report),
        "policy": {
            "task_tag": report.policy.task_tag,
            "generation_tag": report.policy.generation_tag,
            "grace_seconds": int(report.policy.grace.total_seconds()),
            "leaked_by": leaked_by_text(report.policy.leaked_by),
            "fail_on": report.policy.fail_on,
            "kinds": list(report.policy.kinds),
            "require_generation": list(report.policy.require_generation),
            "fail_on_unverified": report.policy.fail_on_unverified,
            "untrusted_file": untrusted_file_document(report.policy),
        },
        "evidence": dict(report.evidence_checked),
        "evidence_sources": dict(report.evidence_sources),
        "others_in_groups": [o._asdict() for o in report.others_in_groups],
        "failures": [{"source": f.source, "reason": f.reason} for f in report.failures],
        "prices": {
            "as_of": report.prices.as_of,
            "currency": report.prices.currency,
            "basis": report.prices.basis,
            "sources": price_sources(report),
        },
        "summary": {
            "resources": report.resources_seen,
            "untagged": report.untagged,
            "findings": len(report.findings),
            "by_verdict": {v: report.count(v) for v in VERDICTS},
            "billable": cost.billable,
            "hourly": round(cost.hourly, 4),  # the known part: see the counts below
            "accrued": round(cost.accrued, 2),
            "unpriced_billable": cost.unpriced,
            "age_unknown_billable": cost.age_unknown,
            "power_unknown": sum(
                1 for f in report.findings if f.cost.billable is None and f.resource.kind == VM
            ),
            "billing_unknown": cost.billing_unknown,
            "by_kind": dict(Counter(f.resource.kind for f in report.findings)),
            "acknowledged": report.acknowledgements(),
            "acknowledgement_expired": report.acknowledgements(expired=True),
        },
        "warnings": list(report.warnings),
        "history": history_document(report.history),
    }


def untrusted_file_document(policy: AuditPolicy | ReportedPolicy) -> dict[str, Any] | None:
    """The untrusted discovered file whose keys applied, and those keys (None: none did)."""
    if not policy.untrusted_keys:
        return None
    return {"path": policy.untrusted_file, "keys": list(policy.untrusted_keys)}


def untrusted_policy_text(policy: AuditPolicy | ReportedPolicy) -> str | None:
    """Whose policy this was, when not the operator's: the untrusted discovered file and each
    of its keys that applied (principle 8: a key that can hide a finding is named). The
    headline of every report format and the plan's table say it."""
    if not policy.untrusted_keys:
        return None
    return (
        f"Policy from an untrusted file: {one_line(policy.untrusted_file or '?', 300)} "
        f"(discovered, not trusted) set {', '.join(policy.untrusted_keys)}."
    )


def price_sources(report: AuditReport) -> dict[str, int]:
    """Where the report's figures came from: each price source and how many it priced."""
    return dict(Counter(f.cost.source for f in report.findings if f.cost.source))


def history_document(history: ReportHistory | None) -> dict[str, Any] | None:
    """What changed as a whole since the previous audit of the scope (None: no history)."""
    if history is None:
        return None
    changes = Counter(found.change for found in history.findings.values())
    return {
        "store": history.store,
        "scope": history.scope,
        "previous_audit": history.previous_at.isoformat() if history.previous_at else None,
        "summary": {change: changes.get(change, 0) for change in (NEW, STILL, BACK)}
        | {GONE: len(history.gone)},
        "gone_checked": history.gone_checked,
        "gone": [
            {
                "provider": g.provider,
                "account": g.account,
                "id": g.display_id,
                "name": g.name,
                "kind": g.kind,
                "task_id": g.task_id,
                "last_verdict": g.last_verdict,
                "first_seen": g.first_seen.isoformat(),
                "last_seen": g.last_seen.isoformat(),
                "how": g.how,
                "accrued_observed": round(g.accrued, 2),
            }
            for g in history.gone
        ],
    }


def finding_document(finding: Finding, report: AuditReport) -> dict[str, Any]:
    r = finding.resource
    found, state = report.history_of(finding), report.ack_of(finding)
    return {
        "verdict": finding.verdict,
        "reasons": list(finding.reasons),
        "task_id": finding.task_id,
        "generation": finding.generation,
        "checks": {
            "controller_record": finding.checks.controller_record,
            "fixture_id": finding.checks.fixture_id,
            "generation": finding.checks.generation,
            "generation_detail": finding.checks.generation_detail,
        },
        "resource": {
            "provider": r.provider,
            "account": r.account,
            "region": r.region,
            "group": r.group,
            "id": r.id,
            "name": r.name,
            "kind": r.kind,
            "size": r.size,
            "power_state": r.power_state,
            "created": r.created.isoformat() if r.created else None,
            # A resource's tags are a dict already (copied only when some other mapping).
            "tags": r.tags if type(r.tags) is dict else dict(r.tags),
            "source": r.source,
            "uid": r.uid,
        },
        "age_seconds": int(finding.age.total_seconds()) if finding.age is not None else None,
        "billable": finding.cost.billable,
        "cost": {
            "note": finding.cost.note,
            "hourly": finding.cost.hourly,
            "accrued": finding.cost.accrued,
            "currency": finding.cost.currency,
            "source": finding.cost.source,
        },
        "history": None
        if found is None
        else {
            "change": found.change,
            "first_seen": _iso(found.first_seen),
            "previous_verdict": found.previous_verdict,
            "returns": found.returns,
            "observed_hours": round(found.observed_hours, 2),
            "accrued_observed": round(found.accrued, 2),
        },
        "acknowledgement": ack_document(state),
    }


@lru_cache(maxsize=1024)
def _iso(moment: datetime) -> str:
    # Findings first seen by the same audit share its time: written once, not per finding.
    return moment.isoformat()


def ack_document(state: AckState | None) -> dict[str, Any] | None:
    """A finding's acknowledgement, live or expired (None: none covers it)."""
    if state is None:
        return None
    return {
        "owner": state.ack.owner,
        "reason": state.ack.reason,
        "until": state.ack.until.isoformat(),
        "source": state.ack.source,
        "expired": state.expired,
    }


def write_report(report: AuditReport, out: TextIO) -> None:
    """The document, streamed: the head, then one finding a line."""
    head = json.dumps(report_head(report), indent=2, ensure_ascii=False)
    out.write(head[: head.rindex("}")].rstrip() + ',\n  "findings": [')
    _write_lines(out, report)
    out.write("]\n}\n")


def _write_lines(out: TextIO, report: AuditReport) -> None:
    line = FindingLines(report, lambda finding: finding_document(finding, report)).line
    separator = "\n    "
    for finding in report.findings:
        out.write(separator)
        out.write(line(finding))
        separator = ",\n    "
    if report.findings:
        out.write("\n  ")


# -- reading -----------------------------------------------------------------------------


class ReportError(DocumentError):
    """Not a `cloudguard.audit` v1 report, or a malformed one: exit 97."""


@dataclass(frozen=True)
class ReportedPolicy:
    """The fleet vocabulary the audit used (a plan carries it for its reviewer)."""

    task_tag: str = "task-id"
    generation_tag: str = "repository-generation"
    leaked_by: tuple[tuple[str, str], ...] = ()
    # The untrusted discovered file whose keys applied, and those keys: the plan names them.
    untrusted_file: str | None = None
    untrusted_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReportedFinding:
    """One finding as the report states it: the resource as the audit saw it, and why."""

    verdict: str
    reasons: tuple[str, ...]
    controller_record: str  # found | missing | not-checked
    resource: Resource  # `size` and `source` are "" when the report leaves them out
    # Who acknowledged it, until when and why, while live at the audit; None: nobody (and
    # always in a version 1 report, which knew no acknowledgements).
    acknowledged: str | None = None


@dataclass(frozen=True)
class ReadReport:
    generated_at: datetime
    policy: ReportedPolicy
    findings: tuple[ReportedFinding, ...]
    # Where its evidence was read from; None: a report written before it said so.
    evidence_sources: dict[str, Any] | None = None
    # What each group that is a finding holds that is not the fleet's; None: a report
    # written before it said so.
    others_in_groups: tuple[GroupOthers, ...] | None = None


def load_report(path: Path) -> Any:
    """The parsed JSON of a report file (a missing file is a usage error)."""
    return read_json_file(path, "audit report", ReportError)


def read_report(document: Any, source: str, verdicts: Collection[str] | None = None) -> ReadReport:
    """A parsed report, checked field by field; `verdicts`: read only those findings (the
    others are skipped unread, as a plan for orphans has no business with ok VMs)."""
    doc = StrictReader(source, ReportError)
    root = doc.root(
        document,
        SCHEMA,
        READABLE_VERSIONS,
        "report",
        "write one with `cloudguard audit --format json`",
    )
    policy = read_policy(doc, root.get("policy"))
    generated_at = doc.time(root, "generated_at", "")
    findings = []
    for index, raw in enumerate(doc.array(root.get("findings"), "findings")):
        where = f"findings[{index}]"
        finding = doc.obj(raw, where)
        verdict = doc.text(finding, "verdict", where)
        if verdicts is not None and verdict not in verdicts:
            continue
        findings.append(_finding(doc, finding, verdict, where))
    sources = root.get("evidence_sources")
    evidence = None if sources is None else read_evidence_sources(doc, sources, "evidence_sources")
    others = root.get("others_in_groups")
    held = None if others is None else _others_in_groups(doc, others)
    return ReadReport(generated_at, policy, tuple(findings), evidence, held)


def _others_in_groups(doc: StrictReader, value: Any) -> tuple[GroupOthers, ...]:
    found = []
    for index, raw in enumerate(doc.array(value, "others_in_groups")):
        where = f"others_in_groups[{index}]"
        entry = doc.obj(raw, where)
        held = entry.get("held")
        if not isinstance(held, int) or isinstance(held, bool) or held < 1:
            raise doc.fail(f"{where}.held", "expected a whole number above 0")
        found.append(
            GroupOthers(
                doc.text(entry, "provider", where),
                doc.text(entry, "account", where),
                doc.text(entry, "group", where),
                held,
                doc.text(entry, "example", where),
            )
        )
    return tuple(found)


def _finding(doc: StrictReader, finding: Any, verdict: str, where: str) -> ReportedFinding:
    r = doc.obj(finding.get("resource"), f"{where}.resource")
    checks = doc.obj(finding.get("checks"), f"{where}.checks")
    resource = Resource(
        provider=doc.text(r, "provider", where),
        account=doc.text(r, "account", where),
        region=doc.text(r, "region", where),
        group=doc.text(r, "group", where),
        id=doc.text(r, "id", where),
        name=doc.text(r, "name", where),
        kind=doc.text(r, "kind", where),
        size=doc.optional_text(r, "size", where),
        tags=doc.tags(r.get("tags"), f"{where}.resource.tags"),
        power_state=doc.text(r, "power_state", where),
        uid=doc.optional_text(r, "uid", where),
        created=doc.optional_time(r, "created", where),
        source=doc.optional_text(r, "source", where),
    )
    return ReportedFinding(
        verdict=verdict,
        reasons=tuple(doc.text_list(finding.get("reasons"), f"{where}.reasons")),
        controller_record=doc.text(checks, "controller_record", f"{where}.checks"),
        resource=resource,
        acknowledged=_acknowledged(doc, finding.get("acknowledgement"), where),
    )


def _acknowledged(doc: StrictReader, value: Any, where: str) -> str | None:
    """A live acknowledgement, in words; None when there is none or it had expired."""
    if value is None:
        return None
    where = f"{where}.acknowledgement"
    ack = doc.obj(value, where)
    expired = ack.get("expired")
    if not isinstance(expired, bool):
        raise doc.fail(f"{where}.expired", "expected true or false")
    if expired:
        return None
    owner, until = doc.text(ack, "owner", where), doc.text(ack, "until", where)
    return f"acknowledged by {owner} until {until} ({doc.text(ack, 'reason', where)})"


def read_policy(doc: StrictReader, value: Any) -> ReportedPolicy:
    """The `policy` object of a report (or of a plan, which carries the report's)."""
    policy = doc.obj(value, "policy")
    untrusted = policy.get("untrusted_file")  # absent before it was reported: none
    path: str | None = None
    keys: tuple[str, ...] = ()
    if untrusted is not None:
        named = doc.obj(untrusted, "policy.untrusted_file")
        path = doc.text(named, "path", "policy.untrusted_file")
        keys = tuple(doc.text_list(named.get("keys"), "policy.untrusted_file.keys"))
    return ReportedPolicy(
        task_tag=doc.text(policy, "task_tag", "policy"),
        generation_tag=doc.text(policy, "generation_tag", "policy"),
        leaked_by=read_leaked_by(doc, policy.get("leaked_by"), "policy.leaked_by"),
        untrusted_file=path,
        untrusted_keys=keys,
    )


def read_evidence_sources(doc: StrictReader, value: Any, where: str) -> dict[str, Any]:
    """`{"controller-home": "/srv/fleet", "fixtures-from": ["/src/tests"], ...}`: each value
    a string or an array of strings."""
    sources = doc.obj(value, where)
    for key, located in sources.items():
        if not isinstance(located, str):
            doc.text_list(located, f"{where}.{key}")
    return dict(sources)


def read_leaked_by(doc: StrictReader, value: Any, where: str) -> tuple[tuple[str, str], ...]:
    """`["KEY=VALUE", ...]` (a report's or a plan's), each entry checked."""
    return tuple(doc.parsed(v, where, parse_leaked_by) for v in doc.text_list(value or [], where))

"""SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One result per orphan, leaked or suspect finding, and per unverified one while
unverified resources fail the audit (pending, accepted unverified and ok
findings prove nothing wrong and are left out). A cloud resource is not a line of
code: each result names the resource as a logical location (its cloud id)
and, as its physical location, where the record came from (the inventory
file, or the provider and account swept).

A result's fingerprint hashes only what identifies the resource and the
rule (provider, account, resource id, verdict), so the same leaked VM is the
same alert from one scheduled audit to the next, while its age and cost move.
Unreadable sources are tool notifications: the run did not complete.

With the history, each result says what changed in SARIF's own words
(`baselineState`): `new` (new, back again, or under another rule than last
time) or `unchanged`; and each resource gone since the last audit is one
more result, `absent`, at level `none`, with the fingerprint its alert had.
An acknowledged finding stays a result (never hidden) and says whose
acknowledgement covers it in its message and properties.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from cloudguard import __version__
from cloudguard.audit.formats.changes import change_text, shows_changes
from cloudguard.audit.formats.order import report_order
from cloudguard.audit.formats.rows import cost_cells
from cloudguard.audit.formats.summary import headline
from cloudguard.audit.formats.text import defang, inert
from cloudguard.documents.audit_report import ack_document
from cloudguard.documents.findings import (
    LEAKED,
    ORPHAN,
    SUSPECT,
    UNVERIFIED,
    AuditReport,
    Finding,
    exit_code,
    failing_verdicts,
)
from cloudguard.escape import sarif_text, sarif_uri
from cloudguard.history.store_records import STILL, GoneResource

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT = "cloudguardResource/v1"

# verdict -> (rule id, SARIF level, short description, what to do)
RULES: dict[str, tuple[str, str, str, str]] = {
    LEAKED: (
        "cloudguard/leaked",
        "error",
        "A resource carries a tag the test run should have removed (--leaked-by)",
        "The run that created it leaked it. Reap it: `cloudguard reap plan AUDIT.json`.",
    ),
    ORPHAN: (
        "cloudguard/orphan",
        "error",
        "A fleet-tagged resource that no controller record explains",
        "Nothing owns it and it may be billing. Check its reasons (fixture task id, "
        "generation that is no commit), then reap it: `cloudguard reap plan AUDIT.json`.",
    ),
    SUSPECT: (
        "cloudguard/suspect",
        "warning",
        "A recorded resource with a fixture task id or a generation that is no commit",
        "A controller knows it, but its tags point at a test. Look before reaping.",
    ),
    UNVERIFIED: (
        "cloudguard/unverified",
        "warning",
        "A fleet-tagged resource no evidence source could judge",
        "The audit read no controller records and no owned ids that could explain it, so it "
        "can be called neither ok nor orphan, and it fails the audit. Give the audit its "
        "evidence, or accept unjudged resources with --allow-unverified.",
    ),
}


def fingerprint(finding: Finding) -> str:
    r = finding.resource
    return _fingerprint(r.provider, r.account, r.id, finding.verdict)


def _fingerprint(provider: str, account: str, resource_id: str, verdict: str) -> str:
    identity = "\x1f".join((provider, account, resource_id, verdict))
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()


def sarif_document(report: AuditReport) -> dict[str, Any]:
    # Suspects are reported whatever --fail-on says (a warning to look at); unverified ones
    # only while they fail the audit, so an alert says why the job failed.
    shown = set(RULES) - ({UNVERIFIED} - failing_verdicts(report.policy))
    findings = [f for f in report_order(report.findings) if f.verdict in shown]
    gone = [g for g in report.history.gone if g.last_verdict in shown] if report.history else []
    reported = {f.verdict for f in findings} | {g.last_verdict for g in gone}
    verdicts_present = [v for v in RULES if v in reported]
    rule_index = {v: i for i, v in enumerate(verdicts_present)}
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "cloudguard",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": [_rule(v) for v in verdicts_present],
                    }
                },
                "invocations": [_invocation(report)],
                "results": [_result(f, rule_index[f.verdict], report) for f in findings]
                + [_absent(g, rule_index[g.last_verdict]) for g in gone],
                "properties": {"summary": headline(report)},
            }
        ],
    }


def _rule(verdict: str) -> dict[str, Any]:
    rule_id, level, short, help_text = RULES[verdict]
    return {
        "id": rule_id,
        "name": verdict.capitalize() + "CloudResource",
        "shortDescription": {"text": short},
        "fullDescription": {"text": f"{short}. {help_text}"},
        "help": {"text": help_text},
        "defaultConfiguration": {"level": level},
        "properties": {"tags": ["cloud", "cost", "test-hygiene"]},
    }


def _invocation(report: AuditReport) -> dict[str, Any]:
    return {
        "executionSuccessful": not report.failures,
        "exitCode": exit_code(report),
        "toolExecutionNotifications": [
            {
                "level": "error",
                "message": {
                    "text": sarif_text(f"could not read {inert(f.source)}: {inert(f.reason, 300)}")
                },
                "descriptor": {"id": "cloudguard/unreadable-source"},
            }
            for f in report.failures
        ],
    }


def _result(finding: Finding, index: int, report: AuditReport) -> dict[str, Any]:
    r, cost = finding.resource, finding.cost
    rule_id, level, _, _ = RULES[finding.verdict]
    billable, hourly, accrued = cost_cells(cost, report.prices.currency, r.kind)
    where = "/".join(p for p in (r.account, r.group, r.region) if p)
    what = f"{finding.verdict} {r.provider} {r.kind} {inert(r.name, 80)}"
    why = ", ".join(finding.reasons) or "no reason recorded"
    spend = f"billable {billable}, per hour {hourly}, accrued {accrued}; {cost.note}"
    text = f"{what} in {inert(where, 160)}: {why}; {spend}"
    if shows_changes(report):
        text += f"; since the last audit: {defang(change_text(report, finding))}"
    text = sarif_text(text)
    found, state = report.history_of(finding), report.ack_of(finding)
    baseline = {}
    if found is not None:
        changed = found.change != STILL or found.previous_verdict != finding.verdict
        baseline = {"baselineState": "new" if changed else "unchanged"}
    return {
        **baseline,
        "ruleId": rule_id,
        "ruleIndex": index,
        "level": level,
        "message": {"text": text},
        "locations": [
            {
                "physicalLocation": {"artifactLocation": {"uri": _source_uri(r.source, r)}},
                "logicalLocations": [
                    {"name": r.name, "fullyQualifiedName": r.id, "kind": "resource"}
                ],
            }
        ],
        "partialFingerprints": {FINGERPRINT: fingerprint(finding)},
        "properties": {
            "verdict": finding.verdict,
            "reasons": list(finding.reasons),
            "provider": r.provider,
            "account": r.account,
            "region": r.region,
            "resourceId": r.id,
            "taskId": finding.task_id,
            "generation": finding.generation,
            "billable": cost.billable,
            "hourly": cost.hourly,
            "accrued": cost.accrued,
            "currency": cost.currency,
            "firstSeen": found.first_seen.isoformat() if found is not None else None,
            "acknowledgement": ack_document(state),
        },
    }


def _absent(gone: GoneResource, index: int) -> dict[str, Any]:
    """A resource the previous audit of the scope reported and this one did not see."""
    rule_id, _, _, _ = RULES[gone.last_verdict]
    text = sarif_text(
        f"gone since the last audit ({gone.how}): {gone.last_verdict} {gone.provider} "
        f"{gone.kind} {inert(gone.name, 80)} in {inert(gone.account, 80)}, seen "
        f"{gone.first_seen:%Y-%m-%d} to {gone.last_seen:%Y-%m-%d}"
    )
    return {
        "baselineState": "absent",
        "ruleId": rule_id,
        "ruleIndex": index,
        "level": "none",
        "message": {"text": text},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": sarif_uri(f"{gone.provider}:{gone.account}")}
                },
                "logicalLocations": [
                    {"name": gone.name, "fullyQualifiedName": gone.display_id, "kind": "resource"}
                ],
            }
        ],
        "partialFingerprints": {
            FINGERPRINT: _fingerprint(
                gone.provider, gone.account, gone.display_id, gone.last_verdict
            )
        },
        "properties": {"gone": gone.how, "resourceId": gone.display_id, "taskId": gone.task_id},
    }


def _source_uri(source: str, resource: Any) -> str:
    # An inventory file is a path relative to where the audit ran; a live sweep
    # is named by provider and account.
    return sarif_uri(source or f"{resource.provider}:{resource.account}")


class SarifFormat:
    def render(self, report: AuditReport, *, color: bool = False) -> str:
        return json.dumps(sarif_document(report), indent=2, ensure_ascii=False) + "\n"

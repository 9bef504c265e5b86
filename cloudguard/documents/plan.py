"""The reap plan: made offline from an audit report, read back strictly before apply.

`build_plan` selects the audit's reapable findings and names the provider
action for each; it never touches the cloud. A plan document is schema
`cloudguard.reap.plan` version 1 (docs/reap.md). Reading one back checks
every field: a plan is what an operator approved, so a file that is not
exactly a plan is refused (`PlanError`, exit 97) and a well-formed plan that
asks for something unsafe is a usage error (`PlanUsageError`, exit 2).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from cloudguard.audit.config import OptionValueError, parse_leaked_by
from cloudguard.audit.findings import LEAKED, VERDICTS
from cloudguard.audit.formats.json_report import SCHEMA as AUDIT_SCHEMA
from cloudguard.audit.formats.json_report import SCHEMA_VERSION as AUDIT_SCHEMA_VERSION
from cloudguard.reap.model import (
    DESTRUCTIVE,
    REAPABLE_VERDICTS,
    REQUESTED_ACTIONS,
    REVERSIBLE,
    NotPlanned,
    Plan,
    PlanItem,
    PlanPolicy,
    action_for,
    is_destructive,
    protection_tag,
    provider_actions,
    tag_value,
)
from cloudguard.schemas import schema_id

SCHEMA = "cloudguard.reap.plan"
# 2: items carry `uid` and `created`, the identity of the resource that was reviewed.
SCHEMA_VERSION = 2

# Power states in which the reversible action has nothing left to do.
_ALREADY_OFF = {"deallocate": {"deallocated"}, "stop": {"stopped"}}


class PlanError(Exception):
    """A document that is not what it claims (wrong schema or version, malformed): exit 97."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")


class PlanUsageError(ValueError):
    """A well-formed request that cannot be honoured (non-reapable verdict, bad plan): exit 2."""


# -- from an audit report ----------------------------------------------------------


def read_document(path: Path, what: str) -> Any:
    """JSON from `path`; a missing file is usage, an unreadable or non-JSON one is malformed."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise PlanUsageError(f"{what} {path} does not exist") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanError(str(path), f"cannot read {what}: {exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanError(str(path), f"{what} is not valid JSON: {exc}") from exc


def _not_a(root: Mapping[str, Any], expected: str) -> str:
    """Why `root` is not the `expected` document, in terms of what it is."""
    schema, version = root.get("schema"), root.get("schema_version")
    if schema is None:
        keys = ", ".join(sorted(map(str, root))[:6]) or "none"
        return (
            f'not a {expected}: a JSON document with no "schema" field '
            f"(its keys: {keys}), not something cloudguard wrote"
        )
    return f"not a {expected}: its schema is {schema!r} version {version!r}"


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
) -> Plan:
    """The plan for `audit` (a parsed `cloudguard.audit` v1 document)."""
    if requested_action not in REQUESTED_ACTIONS:
        raise PlanUsageError(
            f"unknown action {requested_action!r} (choose {' or '.join(REQUESTED_ACTIONS)})"
        )
    if with_dependents and requested_action == REVERSIBLE:
        raise PlanUsageError("--with-dependents deletes what a delete leaves: use --action delete")
    wanted = check_verdicts(verdicts)
    doc = _Reader(source)
    root = doc.obj(audit, "")
    if root.get("schema") != AUDIT_SCHEMA or root.get("schema_version") != AUDIT_SCHEMA_VERSION:
        raise PlanError(
            source,
            _not_a(root, f"{AUDIT_SCHEMA} v{AUDIT_SCHEMA_VERSION} report")
            + "; write one with `cloudguard audit --format json`",
        )
    policy_doc = doc.obj(root.get("policy"), "policy")
    policy = PlanPolicy(
        task_tag=doc.text(policy_doc, "task_tag", "policy"),
        generation_tag=doc.text(policy_doc, "generation_tag", "policy"),
        leaked_by=doc.leaked_by(policy_doc.get("leaked_by"), "policy.leaked_by"),
    )
    audited_at = doc.time(root, "generated_at", "")
    items: list[PlanItem] = []
    skipped: list[NotPlanned] = []
    for index, raw in enumerate(doc.array(root.get("findings"), "findings")):
        where = f"findings[{index}]"
        finding = doc.obj(raw, where)
        verdict = doc.text(finding, "verdict", where)
        if verdict not in wanted:
            continue
        r = doc.obj(finding.get("resource"), f"{where}.resource")
        checks = doc.obj(finding.get("checks"), f"{where}.checks")
        item = PlanItem(
            provider=doc.text(r, "provider", where),
            account=doc.text(r, "account", where),
            region=doc.text(r, "region", where),
            group=doc.text(r, "group", where),
            id=doc.text(r, "id", where),
            name=doc.text(r, "name", where),
            kind=doc.text(r, "kind", where),
            action="",
            tags=doc.tags(r.get("tags"), f"{where}.resource.tags"),
            verdict=verdict,
            reasons=tuple(doc.text_list(finding.get("reasons"), f"{where}.reasons")),
            power_state=doc.text(r, "power_state", where),
            audited_at=audited_at,
            controller_record=doc.text(checks, "controller_record", f"{where}.checks"),
            uid=doc.optional_text(r, "uid", where),
            created=doc.optional_time(r, "created", where),
        )
        if verdict == LEAKED:
            carried = tuple(
                (k, v) for k, v in policy.leaked_by if tag_value(item.provider, item.tags, k) == v
            )
            item = _with(item, leaked_by=carried)
        action = action_for(item.provider, item.kind, requested_action)
        why = _not_planned_because(item, action, requested_action)
        if why is not None or action is None:
            skipped.append(NotPlanned(item.id, item.name, verdict, why or "no action"))
            continue
        items.append(_with(item, action=action))
    return Plan(
        created_at=now,
        audit_generated_at=audited_at,
        audit_source=source,
        requested_action=requested_action,
        verdicts=wanted,
        policy=policy,
        items=tuple(items),
        not_planned=tuple(skipped),
        with_dependents=with_dependents,
    )


def _not_planned_because(item: PlanItem, action: str | None, requested: str) -> str | None:
    if not provider_actions(item.provider, item.kind):
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


def _with(item: PlanItem, **changes: Any) -> PlanItem:
    from dataclasses import replace

    return replace(item, **changes)


# -- the plan document -------------------------------------------------------------


def plan_document(plan: Plan) -> dict[str, Any]:
    return {
        "$schema": schema_id("reap-plan"),
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "created_at": plan.created_at.isoformat(),
        "audit": {
            "generated_at": plan.audit_generated_at.isoformat(),
            "source": plan.audit_source,
        },
        "requested_action": plan.requested_action,
        "with_dependents": plan.with_dependents,
        "verdicts": list(plan.verdicts),
        "policy": {
            "task_tag": plan.policy.task_tag,
            "generation_tag": plan.policy.generation_tag,
            "leaked_by": [f"{k}={v}" for k, v in plan.policy.leaked_by],
        },
        "items": [item_document(item) for item in plan.items],
        "not_planned": [
            {"id": n.id, "name": n.name, "verdict": n.verdict, "why": n.why}
            for n in plan.not_planned
        ],
    }


def item_document(item: PlanItem) -> dict[str, Any]:
    return {
        "provider": item.provider,
        "account": item.account,
        "region": item.region,
        "group": item.group,
        "id": item.id,
        "name": item.name,
        "kind": item.kind,
        "action": item.action,
        "tags": dict(item.tags),
        "verdict": item.verdict,
        "reasons": list(item.reasons),
        "power_state": item.power_state,
        "audited_at": item.audited_at.isoformat(),
        "leaked_by": [f"{k}={v}" for k, v in item.leaked_by],
        "controller_record": item.controller_record,
        "uid": item.uid,
        "created": item.created.isoformat() if item.created else None,
    }


def render_plan(plan: Plan) -> str:
    return json.dumps(plan_document(plan), indent=2, ensure_ascii=False) + "\n"


def plan_digest(data: bytes) -> str:
    """What `reap plan` prints and `apply --approve` must repeat: the plan file's exact bytes."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def read_plan_bytes(path: Path) -> bytes:
    """The plan file, read once: its digest and its content come from the same bytes."""
    try:
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise PlanUsageError(f"plan {path} does not exist") from exc
    except OSError as exc:
        raise PlanError(str(path), f"cannot read plan: {exc}") from exc


def load_plan(path: Path, data: bytes | None = None) -> Plan:
    """A plan file (or its bytes, already read), checked field by field."""
    source = str(path)
    doc = _Reader(source)
    if data is None:
        data = read_plan_bytes(path)
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PlanError(source, f"plan is not valid JSON: {exc}") from exc
    root = doc.obj(parsed, "")
    if root.get("schema") != SCHEMA or root.get("schema_version") != SCHEMA_VERSION:
        raise PlanError(
            source,
            _not_a(root, f"{SCHEMA} v{SCHEMA_VERSION} plan")
            + "; make one with `cloudguard reap plan`",
        )
    audit = doc.obj(root.get("audit"), "audit")
    policy_doc = doc.obj(root.get("policy"), "policy")
    requested = doc.text(root, "requested_action", "")
    if requested not in REQUESTED_ACTIONS:
        raise PlanUsageError(f"bad plan {source}: requested_action {requested!r}")
    verdicts = tuple(doc.text_list(root.get("verdicts"), "verdicts"))
    with_dependents = root.get("with_dependents", False)
    if not isinstance(with_dependents, bool):
        raise PlanError(source, "with_dependents: expected true or false")
    if with_dependents and requested != DESTRUCTIVE:
        raise PlanUsageError(f"bad plan {source}: with_dependents in a plan that does not delete")
    plan = Plan(
        created_at=doc.time(root, "created_at", ""),
        audit_generated_at=doc.time(audit, "generated_at", "audit"),
        audit_source=doc.text(audit, "source", "audit"),
        requested_action=requested,
        verdicts=verdicts,
        policy=PlanPolicy(
            task_tag=doc.text(policy_doc, "task_tag", "policy"),
            generation_tag=doc.text(policy_doc, "generation_tag", "policy"),
            leaked_by=doc.leaked_by(policy_doc.get("leaked_by"), "policy.leaked_by"),
        ),
        items=tuple(
            _load_item(doc, raw, f"items[{i}]")
            for i, raw in enumerate(doc.array(root.get("items"), "items"))
        ),
        not_planned=tuple(
            NotPlanned(
                doc.text(n, "id", f"not_planned[{i}]"),
                doc.text(n, "name", f"not_planned[{i}]"),
                doc.text(n, "verdict", f"not_planned[{i}]"),
                doc.text(n, "why", f"not_planned[{i}]"),
            )
            for i, raw in enumerate(doc.array(root.get("not_planned", []), "not_planned"))
            for n in [doc.obj(raw, f"not_planned[{i}]")]
        ),
        with_dependents=with_dependents,
    )
    _check_semantics(plan, source)
    return plan


def _load_item(doc: _Reader, raw: Any, where: str) -> PlanItem:
    item = doc.obj(raw, where)
    return PlanItem(
        provider=doc.text(item, "provider", where),
        account=doc.text(item, "account", where),
        region=doc.text(item, "region", where),
        group=doc.text(item, "group", where),
        id=doc.text(item, "id", where),
        name=doc.text(item, "name", where),
        kind=doc.text(item, "kind", where),
        action=doc.text(item, "action", where),
        tags=doc.tags(item.get("tags"), f"{where}.tags"),
        verdict=doc.text(item, "verdict", where),
        reasons=tuple(doc.text_list(item.get("reasons"), f"{where}.reasons")),
        power_state=doc.text(item, "power_state", where),
        audited_at=doc.time(item, "audited_at", where),
        leaked_by=doc.leaked_by(item.get("leaked_by"), f"{where}.leaked_by"),
        controller_record=doc.text(item, "controller_record", where),
        uid=doc.text(item, "uid", where),
        created=doc.optional_time(item, "created", where),
    )


def _check_semantics(plan: Plan, source: str) -> None:
    """A hand-edited plan cannot widen what reaping may do."""
    for verdict in plan.verdicts:
        if verdict not in REAPABLE_VERDICTS:
            raise PlanUsageError(f"bad plan {source}: verdict {verdict!r} is never reapable")
    for index, item in enumerate(plan.items):
        where = f"bad plan {source}: items[{index}] ({item.name})"
        if not item.account.strip():
            raise PlanUsageError(f"{where}: no account (subscription / AWS account)")
        if item.verdict not in REAPABLE_VERDICTS:
            raise PlanUsageError(f"{where}: verdict {item.verdict!r} is never reapable")
        if item.action not in provider_actions(item.provider, item.kind):
            raise PlanUsageError(
                f"{where}: {item.action!r} is not an action for a {item.provider} {item.kind}"
            )
        if plan.requested_action == REVERSIBLE and is_destructive(
            item.provider, item.kind, item.action
        ):
            raise PlanUsageError(
                f"{where}: {item.action!r} in a plan made for the reversible action"
            )
        if item.verdict == LEAKED and not item.leaked_by:
            raise PlanUsageError(f"{where}: a leaked item must name the leaked-by tags it carried")


# -- strict field access -------------------------------------------------------------


def _aware_time(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError("no UTC offset")
    return moment


T = TypeVar("T")


class _Reader:
    """Typed access to a JSON document; any mismatch is a PlanError naming the field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def _fail(self, where: str, message: str) -> PlanError:
        return PlanError(self.source, f"{where or 'document'}: {message}")

    def obj(self, value: Any, where: str) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self._fail(where, "expected a JSON object")
        return value

    def array(self, value: Any, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise self._fail(where, "expected a JSON array")
        return value

    def text(self, parent: Mapping[str, Any], key: str, where: str) -> str:
        value = parent.get(key)
        if not isinstance(value, str):
            raise self._fail(f"{where}.{key}".lstrip("."), "expected a string")
        return value

    def text_list(self, value: Any, where: str) -> list[str]:
        items = self.array(value, where)
        if not all(isinstance(v, str) for v in items):
            raise self._fail(where, "expected an array of strings")
        return items

    def tags(self, value: Any, where: str) -> dict[str, str]:
        if value is None:
            return {}
        tags = self.obj(value, where)
        if not all(isinstance(v, str) for v in tags.values()):
            raise self._fail(where, "tag values must be strings")
        return dict(tags)

    def optional_text(self, parent: Mapping[str, Any], key: str, where: str) -> str:
        return "" if parent.get(key) is None else self.text(parent, key, where)

    def optional_time(self, parent: Mapping[str, Any], key: str, where: str) -> datetime | None:
        return None if parent.get(key) is None else self.time(parent, key, where)

    def time(self, parent: Mapping[str, Any], key: str, where: str) -> datetime:
        text = self.text(parent, key, where)
        return self._parse(text, f"{where}.{key}".lstrip("."), _aware_time)

    def leaked_by(self, value: Any, where: str) -> tuple[tuple[str, str], ...]:
        return tuple(
            self._parse(v, where, parse_leaked_by) for v in self.text_list(value or [], where)
        )

    def _parse(self, text: str, where: str, parse: Callable[[str], T]) -> T:
        try:
            return parse(text)
        except (ValueError, OptionValueError) as exc:
            raise self._fail(where, f"{text!r}: {exc}") from exc

"""The reap plan, schema `cloudguard.reap.plan` version 4 (docs/reap.md): writer and reader.

A plan is made offline from an audit report (cloudguard.reap.planning) and
is what an operator reviews and approves, so reading one back checks every
field: a file that is not exactly a plan is refused (`PlanError`, exit 97)
and a well-formed plan that asks for something unsafe is a usage error
(`PlanUsageError`, exit 2).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from cloudguard import json_input
from cloudguard.cloud.adapter_registry import Clouds, installed_clouds
from cloudguard.cloud.reaping import DESTRUCTIVE, REQUESTED_ACTIONS, REVERSIBLE
from cloudguard.documents.audit_report import (
    ReportedPolicy,
    read_evidence_sources,
    read_leaked_by,
    read_policy,
    untrusted_file_document,
)
from cloudguard.documents.findings import LEAKED, ORPHAN, leaked_by_text
from cloudguard.documents.strict_json import DocumentError, DocumentUsageError, StrictReader
from cloudguard.schemas import schema_id

SCHEMA = "cloudguard.reap.plan"
# 2: items carry `uid` and `created`, the identity of the resource that was reviewed.
# 3: the plan binds where its audit read the evidence (`evidence`): apply must name the same.
# 4: data is never destroyed by a default: the plan names the kinds that hold data it may
#    delete (`delete_data`), and each such item says what it holds (`holds_data`). A v3 plan
#    is read as deleting no data: one whose items would is refused (plan again).
SCHEMA_VERSION = 4
READABLE_VERSIONS = (3, 4)
# What a plan says of an item whose contents the audit did not count.
HOLDS_DATA_UNKNOWN = "unknown"

# Only these verdicts may be reaped. suspect (a record exists), pending (the
# controller may not have written it yet), unverified (nothing was checked) and
# ok are never reapable, whatever an operator asks for.
REAPABLE_VERDICTS = (ORPHAN, LEAKED)


class PlanError(DocumentError):
    """A document that is not what it claims (wrong schema or version, malformed): exit 97."""


class PlanUsageError(DocumentUsageError):
    """A well-formed request that cannot be honoured (non-reapable verdict, bad plan): exit 2."""


# -- the records -------------------------------------------------------------------------


# The audit's fleet vocabulary, carried in the plan for the reviewer only: apply uses its
# own (configuration and command line), never a plan's.
PlanPolicy = ReportedPolicy


@dataclass(frozen=True)
class PlanItem:
    """One resource the plan would act on, with what the audit saw of it."""

    provider: str
    account: str
    region: str
    group: str
    id: str
    name: str
    kind: str
    action: str  # the provider's verb: deallocate, stop, delete, terminate
    tags: Mapping[str, str]  # the snapshot: apply acts only if the live task/generation agree
    verdict: str
    reasons: tuple[str, ...]
    power_state: str
    audited_at: datetime
    leaked_by: tuple[tuple[str, str], ...] = ()  # the --leaked-by tags it carried (leaked only)
    # What the audit's controller check found: found | missing | not-checked. For the
    # reviewer only: apply reads the controller evidence itself, for every item.
    controller_record: str = "missing"
    # Who it was when reviewed: apply acts only on the very same resource. Azure ids are
    # names, so a VM deleted and re-created under its name has the planned id but a new
    # vmId (uid) and creation time; EC2 ids are never reused (the adapter's ids_never_reused).
    uid: str = ""
    created: datetime | None = None
    # Set on a dependent (what its parent's delete left behind, `--with-dependents`): the
    # item whose live read named it. A disk has no reviewed identity of its own; a NIC or
    # public IP carries as `uid` the resourceGuid its parent's read saw it with.
    dependent_of: str = ""
    # A kind that holds data (a disk, a storage account, a bucket, a database): what it held
    # as far as the audit could say ("unknown" when it could not count cheaply); "" for a
    # kind that holds none.
    holds_data: str = ""
    # A resource group deleted whole: what it held when reviewed, each with its identity,
    # tags and verdict. Apply deletes it only if everything in it now is one of these, each
    # re-derived as reapable as it was.
    members: tuple[PlanItem, ...] = ()


@dataclass(frozen=True)
class NotPlanned:
    """A reapable finding the plan leaves alone, and why (shown, never silently dropped)."""

    id: str
    name: str
    verdict: str
    why: str


@dataclass(frozen=True)
class Plan:
    created_at: datetime
    audit_generated_at: datetime
    audit_source: str
    requested_action: str  # REVERSIBLE or DESTRUCTIVE
    verdicts: tuple[str, ...]
    policy: PlanPolicy
    items: tuple[PlanItem, ...]
    not_planned: tuple[NotPlanned, ...] = field(default=())
    # Reviewed as part of the plan: after each VM's delete, the disks it left billing are
    # items of their own, each re-derived live like any other.
    with_dependents: bool = False
    # Where the audit read its evidence (a locating option's key -> its value, paths
    # absolute): apply re-reads the same sources, and refuses to run with others.
    evidence: Mapping[str, Any] = field(default_factory=dict)
    # The kinds holding data that the operator named for deletion (`--delete-data`): an item
    # of any other such kind is never deleted (listed in not_planned instead).
    delete_data: tuple[str, ...] = ()


# -- writing ---------------------------------------------------------------------------


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
        "delete_data": list(plan.delete_data),
        "evidence": dict(plan.evidence),
        "verdicts": list(plan.verdicts),
        "policy": {
            "task_tag": plan.policy.task_tag,
            "generation_tag": plan.policy.generation_tag,
            "leaked_by": leaked_by_text(plan.policy.leaked_by),
            # Whose policy it was, when not the operator's: the audit's untrusted file and
            # its keys that applied (absent: none).
            **untrusted_policy(plan.policy),
        },
        "items": [item_document(item) for item in plan.items],
        "not_planned": [
            {"id": n.id, "name": n.name, "verdict": n.verdict, "why": n.why}
            for n in plan.not_planned
        ],
    }


def untrusted_policy(policy: PlanPolicy) -> dict[str, Any]:
    whose = untrusted_file_document(policy)
    return {} if whose is None else {"untrusted_file": whose}


def item_document(item: PlanItem) -> dict[str, Any]:
    document = _item_fields(item)
    if item.members:
        document["members"] = [_item_fields(member) for member in item.members]
    return document


def _item_fields(item: PlanItem) -> dict[str, Any]:
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
        "leaked_by": leaked_by_text(item.leaked_by),
        "controller_record": item.controller_record,
        "uid": item.uid,
        "created": item.created.isoformat() if item.created else None,
        "holds_data": item.holds_data,
    }


def render_plan(plan: Plan) -> str:
    return json.dumps(plan_document(plan), indent=2, ensure_ascii=False) + "\n"


def plan_digest(data: bytes) -> str:
    """What `reap plan` prints and `apply --approve` must repeat: the plan file's exact bytes."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


# -- reading -----------------------------------------------------------------------------


def read_plan_bytes(path: Path) -> bytes:
    """The plan file, read once: its digest and its content come from the same bytes."""
    try:
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise PlanUsageError(f"plan {path} does not exist") from exc
    except IsADirectoryError as exc:
        raise PlanUsageError(f"plan {path} is a directory, not a file") from exc
    except OSError as exc:
        raise PlanError(str(path), f"cannot read plan: {exc}") from exc


def load_plan(path: Path, data: bytes | None = None, clouds: Clouds | None = None) -> Plan:
    """A plan file (or its bytes, already read), checked field by field, and checked not to
    ask for more than its clouds allow."""
    source = str(path)
    doc = StrictReader(source, PlanError)
    if data is None:
        data = read_plan_bytes(path)
    try:
        parsed = json_input.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PlanError(source, f"plan is not valid JSON: {exc}") from exc
    root = doc.root(
        parsed, SCHEMA, READABLE_VERSIONS, "plan", "make one with `cloudguard reap plan`"
    )
    current = root.get("schema_version") == SCHEMA_VERSION
    audit = doc.obj(root.get("audit"), "audit")
    policy = read_policy(doc, root.get("policy"))
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
        policy=policy,
        items=tuple(
            _load_item(doc, raw, f"items[{i}]", current=current)
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
        evidence=read_evidence_sources(doc, root.get("evidence"), "evidence"),
        delete_data=tuple(doc.text_list(root.get("delete_data"), "delete_data")) if current else (),
    )
    _check_semantics(plan, source, clouds or installed_clouds())
    return plan


def _load_item(
    doc: StrictReader, raw: Any, where: str, nested: bool = False, *, current: bool = True
) -> PlanItem:
    item = doc.obj(raw, where)
    members = (
        ()
        if nested
        else tuple(
            _load_item(doc, member, f"{where}.members[{i}]", nested=True, current=current)
            for i, member in enumerate(doc.array(item.get("members", []), f"{where}.members"))
        )
    )
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
        leaked_by=read_leaked_by(doc, item.get("leaked_by"), f"{where}.leaked_by"),
        controller_record=doc.text(item, "controller_record", where),
        uid=doc.text(item, "uid", where),
        created=doc.optional_time(item, "created", where),
        holds_data=doc.text(item, "holds_data", where) if current else "",
        members=members,
    )


def _check_semantics(plan: Plan, source: str, clouds: Clouds) -> None:
    """A hand-edited plan cannot widen what reaping may do.

    An item of a cloud that is not available here (no adapter installed, or one that
    cannot load) is not judged on its verb: nothing can act on it, and apply stops when
    it cannot open that cloud's reaper (75, naming why).
    """
    for verdict in plan.verdicts:
        if verdict not in REAPABLE_VERDICTS:
            raise PlanUsageError(f"bad plan {source}: verdict {verdict!r} is never reapable")
    checked = [(f"items[{index}]", item) for index, item in enumerate(plan.items)] + [
        (f"items[{index}].members[{m}]", member)
        for index, item in enumerate(plan.items)
        for m, member in enumerate(item.members)
    ]
    for at, item in checked:
        where = f"bad plan {source}: {at} ({item.name})"
        cloud = clouds.cloud(item.provider)
        if not item.account.strip():
            raise PlanUsageError(f"{where}: no account (subscription / AWS account)")
        if item.verdict not in REAPABLE_VERDICTS:
            raise PlanUsageError(f"{where}: verdict {item.verdict!r} is never reapable")
        if cloud.adapter is not None and item.action not in cloud.actions(item.kind):
            raise PlanUsageError(
                f"{where}: {item.action!r} is not an action for a {item.provider} {item.kind}"
            )
        if plan.requested_action == REVERSIBLE and cloud.is_destructive(item.kind, item.action):
            raise PlanUsageError(
                f"{where}: {item.action!r} in a plan made for the reversible action"
            )
        if item.verdict == LEAKED and not item.leaked_by:
            raise PlanUsageError(f"{where}: a leaked item must name the leaked-by tags it carried")
        if (
            cloud.holds_data(item.kind)
            and cloud.is_destructive(item.kind, item.action)
            and item.kind not in plan.delete_data
        ):
            raise PlanUsageError(
                f"{where}: a {item.provider} {item.kind} holds data, and the plan does not name "
                f"its kind for deletion: `reap plan --delete-data {item.kind}` (plan again)"
            )

"""Classification: one resource + the evidence -> a `Finding`. A pure function.

No I/O, no clock: `now` is passed in, so the same inputs always give the same
verdict (and the benchmark measures only this).
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache

from cloudguard.audit.cost import PriceTable, estimate
from cloudguard.audit.evidence.interface import Evidence, GenerationStatus
from cloudguard.cloud.adapter_registry import Clouds
from cloudguard.cloud.records import Resource
from cloudguard.documents.findings import (
    FIXTURE_TASK_ID,
    LEAKED,
    LEAKED_RUN_TAG,
    NO_CONTROLLER_RECORD,
    NOT_CHECKED,
    OK,
    ORPHAN,
    OWNED_BY_PREFIX,
    PENDING,
    SUSPECT,
    UNKNOWN_GENERATION,
    UNVERIFIABLE_GENERATION,
    UNVERIFIED,
    AuditPolicy,
    Checks,
    Finding,
)

_GENERATION_REASON = {
    GenerationStatus.NOT_A_COMMIT: UNKNOWN_GENERATION,
    GenerationStatus.UNVERIFIABLE: UNVERIFIABLE_GENERATION,
}


@lru_cache(maxsize=1024)
def _checks(record: str, fixture: str, generation: str, detail: str) -> Checks:
    # Few distinct combinations in a fleet: findings share one record each.
    return Checks(
        controller_record=record,
        fixture_id=fixture,
        generation=generation,
        generation_detail=detail,
    )


def classify(
    resource: Resource,
    evidence: Evidence,
    policy: AuditPolicy,
    prices: PriceTable,
    now: datetime,
    clouds: Clouds | None = None,
    tagged: tuple[str, str | None] | None = None,
) -> Finding | None:
    """The finding for `resource`, or None when it is not the fleet's (no task tag).

    Tag names compare as `resource`'s cloud compares them, from `clouds` (default: the
    registry `prices` was made for). `tagged`: its task id and generation tags as the
    caller read them with the same names and cloud (the auditor, asking the evidence about
    them), when it has a task id; None: read here."""
    tag, tags = (clouds or prices.clouds).cloud(resource.provider).tag, resource.tags
    leaked = bool(policy.leaked_by) and any(
        tag(tags, key) == value for key, value in policy.leaked_by
    )
    task_id: str | None
    if tagged is not None:
        task_id, generation = tagged
    else:
        task_id = tag(tags, policy.task_tag)
        if task_id is None and not leaked:
            return None
        generation = tag(tags, policy.generation_tag)

    reasons: list[str] = []
    # Another source (Terraform state, the controller's own list) owning the
    # cloud id explains the VM as a controller record does.
    owner = evidence.owner_of(resource.id) if evidence.owned_ids else None
    if owner is not None:
        reasons.append(OWNED_BY_PREFIX + owner)
    record = NOT_CHECKED
    if evidence.controller_tasks is not None and task_id is not None:
        record = "found" if task_id in evidence.controller_tasks else "missing"
        if record == "missing" and owner is None:
            reasons.append(NO_CONTROLLER_RECORD)

    fixture = NOT_CHECKED
    if evidence.fixture_ids is not None and task_id is not None:
        fixture = "fixture" if task_id in evidence.fixture_ids else "not-fixture"
        if fixture == "fixture":
            reasons.append(FIXTURE_TASK_ID)

    gen_state, gen_detail = NOT_CHECKED, ""
    if evidence.generations is not None:
        if generation is None and resource.kind in policy.require_generation:
            # A fleet VM always carries its generation; without one nothing
            # ties it to a commit.
            gen_state, gen_detail = "no-tag", f"no {policy.generation_tag} tag"
            reasons.append(UNKNOWN_GENERATION)
        elif generation is None:
            # Infrastructure code tags a NIC, a disk, a public IP with the task id
            # alone: lacking the tag says nothing against it (docs/audit.md).
            gen_state = "no-tag"
            gen_detail = f"no {policy.generation_tag} tag (not required of a {resource.kind})"
        else:
            check = evidence.generations.get(generation)
            if check is not None:
                gen_state, gen_detail = check.status.value, check.detail
                if check.status in _GENERATION_REASON:
                    reasons.append(_GENERATION_REASON[check.status])

    age = now - resource.created if resource.created is not None else None
    if leaked:
        verdict = LEAKED
        reasons.insert(0, LEAKED_RUN_TAG)
    elif record == "missing" and owner is None and evidence.ownership_unread:
        verdict = UNVERIFIED  # an owned-id source that could not be read may own it
    elif record == "missing" and owner is None:
        young = age is not None and age < policy.grace
        # Waiting cannot fix a fixture id or a non-commit: those are orphans now.
        damning = FIXTURE_TASK_ID in reasons or UNKNOWN_GENERATION in reasons
        verdict = PENDING if young and not damning else ORPHAN
    elif FIXTURE_TASK_ID in reasons or UNKNOWN_GENERATION in reasons:
        verdict = SUSPECT
    elif record == NOT_CHECKED and owner is None:
        verdict = UNVERIFIED
    else:
        # An unverifiable generation stays a reason on an ok finding: the
        # controller knows the task, and a shallow clone is no evidence against it.
        verdict = OK

    # Made in C (a NamedTuple's own `__new__` is a Python call): one per fleet resource.
    return tuple.__new__(Finding, (
        resource, task_id, generation, verdict, tuple(reasons),
        _checks(record, fixture, gen_state, gen_detail), estimate(resource, prices, now), age,
    ))  # fmt: skip

"""What the audit remembers and tells: acknowledgements, the history, the webhooks.

The audit command calls these around the auditor, which knows none of it,
with what the settings boundary (cloudguard.settings.engine_requests) made of
its settings; nothing here reads them:

1. `open_history` before anything is swept (a store that cannot be used is 75
   at once, not after a long sweep), at the `HistoryPlace` the boundary made
   of `[history]`;
2. `read_acknowledgements`: the reviewed files' and those made with
   `cloudguard ack`;
3. `remember`: the acknowledgements applied to the findings, the run recorded,
   and the report told what changed (`AuditReport.history`);
4. `notification`: what is new and which acknowledgements expired, for
   `cloudguard.notify` to deliver.

A finding is keyed in the history by its resource's identity (provider,
account, the cloud's id as the cloud compares it, and the provider's unique
id when known), never by fields of one kind of resource.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import TYPE_CHECKING

from cloudguard.acknowledgements import Ack, AckBook, AckState, read_ack_file
from cloudguard.audit.formats.order import report_order
from cloudguard.cloud.adapter_registry import Clouds
from cloudguard.documents.findings import (
    NEW_ONLY,
    ORPHAN,
    AuditReport,
    Finding,
    FindingKey,
    ReportHistory,
    acknowledged,
    exit_code,
    failing_verdicts,
    finding_key,
    news,
)
from cloudguard.history.errors import HistoryUnavailable
from cloudguard.history.store_records import (
    ACK_EXPIRED,
    NOW_FAILING,
    AuditRun,
    Observation,
    ResourceKey,
)

if TYPE_CHECKING:
    # The store's engines and the webhooks' message: imported where they are used, so an
    # audit --no-history (or one that notifies no one) does not load them at start-up.
    from cloudguard.history.store import HistoryStore
    from cloudguard.notify import message

# `finding_key` made in C: (provider, id) of each of a report's findings.
_FINDING_KEY = attrgetter("resource.provider", "resource.id")
TREND_DAYS = 90  # how far back the HTML report's trend chart looks
OFFENDERS = 10  # the task ids the HTML report names


@dataclass(frozen=True)
class HistoryPlace:
    """Where `[history]` says the store is: at most one of a PostgreSQL URL, the variable
    holding one, a SQLite file (none of them: the default file); and how long to wait for
    a busy one."""

    url: str | None
    url_env: str | None
    path: str | None
    busy_timeout: timedelta


def store_location(place: HistoryPlace, environ: Mapping[str, str] | None = None) -> str | None:
    """Where the store is (None: the default file); `url-env` naming an unset variable is
    HistoryUnavailable (75)."""
    if place.url_env:
        url = (os.environ if environ is None else environ).get(place.url_env)
        if not url:
            raise HistoryUnavailable(f"${place.url_env}", "is not set ([history] url-env names it)")
        return url
    return place.url or place.path


def open_history(place: HistoryPlace) -> HistoryStore:
    """The store `place` names, ready (HistoryError, 75)."""
    from cloudguard.history.location import open_store

    return open_store(store_location(place), busy_timeout=place.busy_timeout.total_seconds())


def read_acknowledgements(
    ack_files: Iterable[str], store: HistoryStore | None, now: datetime
) -> list[Ack]:
    """Every acknowledgement: the reviewed files' (AckFileError, 97) and the store's."""
    acks = [ack for path in ack_files for ack in read_ack_file(Path(path), now)]
    return acks + (store.acks() if store is not None else [])


def apply_acknowledgements(report: AuditReport, acks: Iterable[Ack], clouds: Clouds) -> AuditReport:
    """`report` with each finding's acknowledgement (live or expired) attached."""
    acks = list(acks)
    states: dict[FindingKey, AckState] = {}
    if not acks:  # none to apply (most nights): not asked of each finding
        return replace(report, acknowledged=states)
    book = AckBook(acks, report.generated_at)
    for finding in report.findings:
        folded = clouds.cloud(finding.resource.provider).case_insensitive_names
        state = book.state(finding.resource.id, case_insensitive=folded)
        if state is not None:
            states[finding_key(finding)] = state
    return replace(report, acknowledged=states)


def observations(report: AuditReport, clouds: Clouds) -> list[Observation]:
    """Each finding as the history keeps it (no tags: they may hold anything)."""
    providers = {f.resource.provider for f in report.findings}
    id_keys = {provider: clouds.cloud(provider).id_key_of for provider in providers}
    # Each record made in C: a NamedTuple's own `__new__` is a Python call, two a finding.
    make = tuple.__new__
    found = []
    for f in report.findings:
        r = f.resource
        key = make(ResourceKey, (r.provider, r.account, id_keys[r.provider](r.id), r.uid))
        cost = f.cost
        found.append(
            make(Observation, (key, r.id, r.name, r.kind, f.task_id, f.verdict, f.reasons,
                               cost.billable, cost.hourly))
        )  # fmt: skip
    return found


def remember(report: AuditReport, store: HistoryStore, scope: str, clouds: Clouds) -> AuditReport:
    """Record `report` (acknowledgements applied) and tell it what changed since the
    previous audit of `scope` (HistoryError, 75, when the store fails)."""
    seen = observations(report, clouds)
    # What is new is known only once recorded: the run keeps whether anything failed.
    judged = replace(report, policy=replace(report.policy, fail_on=ORPHAN))
    run = AuditRun(
        at=report.generated_at,
        scope=scope,
        complete=not report.failures,
        exit_code=exit_code(report if report.policy.fail_on != NEW_ONLY else judged),
        currency=report.prices.currency,
        host=socket.gethostname(),
    )
    recorded = store.record_audit(run, seen, acknowledged=report.acknowledgements())
    history = ReportHistory(
        store=store.location,
        scope=scope,
        previous_at=recorded.previous_at,
        # By finding: each observation's history, read by the key it was given with.
        findings=dict(
            zip(
                map(_FINDING_KEY, report.findings),
                map(recorded.findings.__getitem__, map(itemgetter(0), seen)),
                strict=True,
            )
        ),
        gone=recorded.gone,
        gone_checked=recorded.gone_checked,
        trend=tuple(store.trend(report.generated_at - timedelta(days=TREND_DAYS))),
        offenders=tuple(store.offenders(OFFENDERS)),
    )
    return replace(report, history=history)


def shared_scope(scope: str) -> str:
    """The scope as a webhook is told it: an inventory by its file's name, not the path on
    this machine (no evidence or local paths leave it, docs/history.md)."""
    return "; ".join(
        f"inventory {os.path.basename(part[len('inventory ') :])}"
        if part.startswith("inventory ")
        else part
        for part in scope.split("; ")
    )


def notification(report: AuditReport) -> message.Notification:
    """What a person should hear of: the findings that are news (`news`: new, back again,
    newly failing) and those whose acknowledgement expired since the previous audit of the
    scope. Empty without the history: it cannot tell."""
    from cloudguard.notify import message

    told = [(f, why) for f in report_order(report.findings) if (why := news(report, f))]
    history = report.history
    failing = failing_verdicts(report.policy)
    return message.Notification(
        generated_at=report.generated_at,
        scope=shared_scope(history.scope) if history is not None else "",
        exit_code=exit_code(report),
        currency=report.prices.currency,
        new=tuple(_notified(f, why, report) for f, why in told if why != ACK_EXPIRED),
        expired=tuple(_notified(f, why, report) for f, why in told if why == ACK_EXPIRED),
        findings=len(report.findings),
        failing=sum(1 for f in report.findings if f.verdict in failing),
        acknowledged=sum(1 for f in report.findings if acknowledged(report, f)),
        gone=len(history.gone) if history is not None else 0,
    )


def _notified(finding: Finding, why: str, report: AuditReport) -> message.NotifiedFinding:
    """Only these fields of a finding ever leave the machine: never its tags."""
    from cloudguard.notify import message

    r, found, state = finding.resource, report.history_of(finding), report.ack_of(finding)
    lapsed = state.ack if state is not None and why == ACK_EXPIRED else None
    return message.NotifiedFinding(
        why=why,
        verdict=finding.verdict,
        reasons=finding.reasons,
        name=r.name,
        resource_id=r.id,
        provider=r.provider,
        account=r.account,
        kind=r.kind,
        task_id=finding.task_id,
        hourly=finding.cost.hourly,
        accrued=finding.cost.accrued,
        first_seen=found.first_seen if found is not None else None,
        previous_verdict=found.previous_verdict if why == NOW_FAILING and found else None,
        ack_owner=lapsed.owner if lapsed else None,
        ack_reason=lapsed.reason if lapsed else None,
        ack_until=lapsed.until if lapsed else None,
    )

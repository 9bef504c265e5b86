"""What a `reap apply --yes` did, recorded in the history from what it wrote to its log.

The reap log is the record of what was done (an `intent` on disk before each
action); the history keeps each item's outcome beside the audits that saw the
resource, so a resource that goes after a reap acted on it is "gone
(reaped)", not "vanished", and `cloudguard history resource ID` shows the
action in its timeline. The outcome of each item is its last record of this
run (as the run wrote it: the file may hold other runs, torn lines too): done,
failed, skipped, held-elsewhere, unreadable, not-reached. A dry run acts on
nothing and is not recorded.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from cloudguard.cloud.adapter_registry import Clouds
from cloudguard.documents.plan import Plan
from cloudguard.history.store import HistoryStore
from cloudguard.history.store_records import ReapAction, ReapRun, ResourceKey

OUTCOMES = frozenset({"done", "failed", "skipped", "held-elsewhere", "unreadable", "not-reached"})


def reap_actions(
    records: Iterable[Mapping[str, Any]], plan: Plan, clouds: Clouds
) -> list[ReapAction]:
    """Each item's outcome among the records one run wrote, keyed as the audits key it."""
    uids = {item.id: item.uid for item in plan.items}
    last: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for record in records:
        if record["event"] in OUTCOMES:
            last[(record["provider"], record["account"], record["id"])] = record
    actions = []
    for (provider, account, resource_id), record in last.items():
        skips = record.get("skips") or ()
        detail = record.get("detail") or "; ".join(f"{s['code']}: {s['detail']}" for s in skips)
        actions.append(
            ReapAction(
                key=ResourceKey(
                    provider,
                    account,
                    clouds.cloud(provider).id_key(resource_id),
                    uids.get(resource_id, ""),
                ),
                display_id=resource_id,
                name=record["name"],
                kind=record["kind"],
                action=record["action"],
                event=record["event"],
                detail=str(detail),
                at=datetime.fromisoformat(record["at"]),
            )
        )
    return actions


def record_apply(
    store: HistoryStore, actions: list[ReapAction], *, at: datetime, digest: str, code: int
) -> int:
    """The apply's run in the history (HistoryError when the store fails): its id."""
    run = ReapRun(
        at=at, mode="apply", plan_digest=digest, exit_code=code, host=socket.gethostname()
    )
    return store.record_reap(run, actions)

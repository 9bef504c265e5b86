"""Apply a plan: for each item, one at a time, read it live, re-derive, then act (or say so).

Fail closed at every step:
- with --yes, a lock on the plan's digest first: a second apply of the same
  plan running at once does nothing but say so (75);
- evidence is read before anything else, and again for each item just
  before deciding; if it cannot be read, nothing more is acted on (75);
- every provider's reaper is opened before the first item, so a missing
  credential stops the run before any action, not halfway (75);
- an item whose live state cannot be read, or that another apply holds, is
  not acted on (75 at the end);
- bounded: an item whose reads spent its budget (`item_budget`) before its
  action is not acted on (unreadable), an action the cloud did not finish
  within it is logged failed, outcome unknown (75: someone must look); the
  next item goes on. Past the apply's `deadline`, the items left are
  `not-reached` (75);
- an action is logged as intent (fsynced) before it is sent, and done/failed
  after; a log that cannot be written raises `ReapLogError` out of here, so
  nothing is acted on after it (the command makes that 75).

Exit: 75 if anything could not be read or was held elsewhere, else 1 if any
action failed, else 0 (every item acted on, would be in a dry run, or
skipped for a safety reason).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, replace

from cloudguard import exit_codes
from cloudguard.audit.evidence.interface import EvidenceError
from cloudguard.cloud.reaping import (
    ActionUnfinished,
    Dependent,
    Live,
    ReadError,
    Reaper,
    ReaperError,
    Withheld,
)
from cloudguard.documents.findings import AuditPolicy
from cloudguard.documents.plan import Plan, PlanItem
from cloudguard.documents.reap_log import ReapLog
from cloudguard.reap.locks import Lock, LockError, Locks
from cloudguard.reap.rederive import LiveAudit
from cloudguard.reap.verify import LOCKED, Skip, verify

ACTION_FAILED = exit_codes.ACTION_FAILED

# Log events.
START, END = "start", "end"
DID_NOT_RUN = "did-not-run"  # evidence, a reaper or a lock could not be had: nothing more is done
UNREADABLE = "unreadable"  # one item's live state could not be read: not acted on
HELD = "held-elsewhere"  # another apply holds this resource: not read, not acted on
SKIPPED = "skipped"  # re-derivation said no
WOULD_ACT = "would-act"  # dry run: re-derived, and would be acted on
INTENT, DONE, FAILED = "intent", "done", "failed"
NOT_REACHED = "not-reached"  # the run stopped before this item
UNFINISHED = "unfinished"  # counted, logged `failed`: sent, not seen to finish in the budget

_INCOMPLETE = (DID_NOT_RUN, UNREADABLE, HELD, NOT_REACHED, UNFINISHED)


def apply_plan(
    plan: Plan,
    *,
    plan_path: str,
    digest: str,
    open_reaper: Callable[[str], Reaper],
    live_audit: LiveAudit,
    log: ReapLog,
    execute: bool,
    locks: Locks | None,
    item_budget: float | None = None,
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """`locks`: where the plan's and each resource's locks are taken (required with
    `execute`): this host's lock directory, and the shared store's when there is one.
    `item_budget`: seconds one item may take, its reads and its action's wait (the
    adapters bound their own waits by it too); `deadline`: seconds the whole apply may
    take, after which no item is begun."""
    counts: Counter[str] = Counter()
    began = clock()
    log.start(
        mode="apply" if execute else "dry-run",
        plan=plan_path,
        plan_digest=digest,
        plan_created_at=plan.created_at.isoformat(),
        audit_generated_at=plan.audit_generated_at.isoformat(),
        items=len(plan.items),
    )

    def end(code: int) -> int:
        log.write(END, exit_code=code, counts=dict(counts))
        return code

    def did_not_run(detail: str, source: str | None = None) -> int:
        if source is None:
            log.write(DID_NOT_RUN, detail=detail)
        else:
            log.write(DID_NOT_RUN, detail=detail, source=source)
        return end(exit_codes.DID_NOT_RUN)

    held: Lock | None = None
    if execute:
        if locks is None:
            return did_not_run("no lock directory: an apply that acts must hold the plan's lock")
        try:
            held = locks.plan(digest)
        except LockError as exc:
            return did_not_run(str(exc))
        if not held.held:
            held.release()
            return did_not_run(
                f"another apply of this plan ({digest}) is running: it holds {held.where}; "
                "nothing was read or done"
            )
    try:
        try:
            live_audit.check_evidence()
        except EvidenceError as exc:
            return did_not_run(f"{exc.source}: {exc.reason}", source=exc.source)
        reapers: dict[str, Reaper] = {}
        try:
            for provider in sorted({item.provider for item in plan.items}):
                try:
                    reapers[provider] = open_reaper(provider)
                except ReaperError as exc:
                    return did_not_run(f"{exc.source}: {exc.reason}", source=exc.source)
            queue = list(plan.items)
            index = 0
            while index < len(queue):
                if deadline is not None and clock() - began > deadline:
                    detail = f"the apply's deadline ({deadline:g} s, --deadline) passed"
                    for later, rest in enumerate(queue[index:], start=index):
                        log.write(NOT_REACHED, rest, item_index=later, detail=detail)
                        counts[NOT_REACHED] += 1
                    break
                item = queue[index]
                bound = _Budget(clock, item_budget)
                outcome, live = _one_locked(
                    index, item, reapers[item.provider], live_audit, log, execute, locks, bound
                )
                counts[outcome] += 1
                if outcome == DID_NOT_RUN:
                    for later, rest in enumerate(queue[index + 1 :], start=index + 1):
                        log.write(NOT_REACHED, rest, item_index=later)
                        counts[NOT_REACHED] += 1
                    break
                if plan.with_dependents and outcome in (DONE, WOULD_ACT) and live is not None:
                    # Right after their VM: items of their own, re-derived like the rest.
                    queue[index + 1 : index + 1] = _dependents(item, live, live_audit)
                index += 1
        finally:
            for reaper in reapers.values():
                reaper.close()
    finally:
        if held is not None:
            held.release()

    if any(counts[kind] for kind in _INCOMPLETE):
        return end(exit_codes.DID_NOT_RUN)  # 75 wins over 1: someone must look either way
    return end(ACTION_FAILED if counts[FAILED] else exit_codes.CLEAN)


def _dependents(parent: PlanItem, live: Live, live_audit: LiveAudit) -> list[PlanItem]:
    """What `parent`'s delete leaves billing, as items: planned as their VM was (its verdict
    and its task and generation tags, which each dependent must carry too). A VM leaves disks
    and NICs; a NIC leaves its public IPs."""
    cloud = live_audit.cloud(parent.provider)
    if not cloud.is_destructive(parent.kind, parent.action):
        return []
    policy: AuditPolicy = live_audit.policy
    disks = live.dependent_disks if parent.kind == "vm" else ()
    found = [*(Dependent("disk", disk, "") for disk in disks), *live.dependents]
    snapshot = {
        name: value
        for name in (policy.task_tag, policy.generation_tag)
        if (value := cloud.tag(parent.tags, name)) is not None
    }
    return [
        replace(
            parent,
            id=dependent.id,
            name=dependent.id.rsplit("/", 1)[-1],
            kind=dependent.kind,
            action="delete",
            tags=snapshot,
            power_state="unknown",
            uid=dependent.uid,
            created=None,
            dependent_of=parent.id,
        )
        for dependent in found
    ]


def _one_locked(
    index: int,
    item: PlanItem,
    reaper: Reaper,
    live_audit: LiveAudit,
    log: ReapLog,
    execute: bool,
    locks: Locks | None,
    budget: _Budget,
) -> tuple[str, Live | None]:
    if not execute or locks is None:
        return _one(index, item, reaper, live_audit, log, execute, budget)
    try:
        lock = locks.resource(item.provider, item.id)
    except LockError as exc:
        log.write(DID_NOT_RUN, item, item_index=index, detail=str(exc))
        return DID_NOT_RUN, None
    with lock:
        if not lock.held:
            skip = Skip(LOCKED, f"another apply holds this resource ({lock.where}): not read")
            log.write(HELD, item, item_index=index, skips=[asdict(skip)])
            return HELD, None
        return _one(index, item, reaper, live_audit, log, execute, budget)


class _Budget:
    """One item's clock: started when the item is begun, its lock's wait included."""

    def __init__(self, clock: Callable[[], float], seconds: float | None) -> None:
        self._clock = clock
        self.seconds = seconds
        self.started = clock()

    def spent(self) -> float | None:
        """Seconds taken, when past the budget; else None."""
        taken = self._clock() - self.started
        return taken if self.seconds is not None and taken > self.seconds else None


def _one(
    index: int,
    item: PlanItem,
    reaper: Reaper,
    live_audit: LiveAudit,
    log: ReapLog,
    execute: bool,
    budget: _Budget,
) -> tuple[str, Live | None]:
    try:
        live = reaper.current(item)
    except Exception as exc:  # a ReadError, or an adapter bug: either way, unknown state
        log.write(UNREADABLE, item, item_index=index, detail=_reason(exc))
        return UNREADABLE, None
    try:
        # Classified now, with evidence read now: a controller that claimed the task
        # while earlier items were being handled must still stop this one. A group and
        # everything it holds are classified together, from one read of the evidence.
        held = [m.resource for m in live.members or ()] if live is not None else []
        findings = live_audit.classify_all([live.resource, *held]) if live is not None else {}
    except EvidenceError as exc:
        log.write(DID_NOT_RUN, item, item_index=index, detail=f"{exc.source}: {exc.reason}")
        return DID_NOT_RUN, None
    finding = findings.get(live.resource.id.casefold()) if live is not None else None
    cloud = live_audit.cloud(item.provider)
    skips = verify(item, live, finding, live_audit.policy, cloud, findings)
    if skips or live is None:
        log.write(SKIPPED, item, item_index=index, skips=[asdict(s) for s in skips])
        return SKIPPED, live
    left = (
        {"detail": "leaves billing: " + ", ".join(live.left_billing)}
        if live.left_billing
        and live_audit.cloud(item.provider).is_destructive(item.kind, item.action)
        else {}
    )
    if not execute:
        log.write(WOULD_ACT, item, item_index=index, power_state=live.resource.power_state, **left)
        return WOULD_ACT, live
    if (taken := budget.spent()) is not None:
        # What was read is as old as the budget: an action now would act on a stale read.
        detail = (
            f"time budget of {budget.seconds:g} s per item (--item-budget) spent before its "
            f"action ({taken:.1f} s taken): not acted on"
        )
        log.write(UNREADABLE, item, item_index=index, detail=detail)
        return UNREADABLE, None
    log.write(INTENT, item, item_index=index, uid=live.resource.uid)
    try:
        reaper.act(item, item.action)
    except Withheld as exc:  # its last look right before the action: changed, nothing sent
        log.write(SKIPPED, item, item_index=index, skips=[asdict(Skip(exc.code, exc.reason))])
        return SKIPPED, live
    except ReadError as exc:  # its last look could not be read: nothing sent
        log.write(UNREADABLE, item, item_index=index, detail=_reason(exc))
        return UNREADABLE, live
    except ActionUnfinished as exc:  # sent, outcome unknown: logged failed, the run is 75
        log.write(FAILED, item, item_index=index, detail=_reason(exc))
        return UNFINISHED, live
    except Exception as exc:  # outcome unknown is a failure too: someone must look
        log.write(FAILED, item, item_index=index, detail=_reason(exc))
        return FAILED, live
    log.write(DONE, item, item_index=index, left_billing=list(live.left_billing), **left)
    return DONE, live


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ReaperError):
        return f"{exc.source}: {exc.reason}"
    return f"{type(exc).__name__}: {exc}"

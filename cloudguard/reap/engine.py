"""Apply a plan: for each item, one at a time, read it live, re-verify, then act (or say so).

Fail closed at every step:
- controller evidence is read before anything else, and again for each item
  just before deciding; if it cannot be read, nothing more is acted on (75);
- every provider's reaper is opened before the first item, so a missing
  credential stops the run before any action, not halfway (75);
- an item whose live state cannot be read is not acted on (75 at the end);
- an action is logged as intent before it is sent, and done/failed after.

Exit: 75 if anything could not be read, else 1 if any action failed, else 0
(every item acted on, would be in a dry run, or skipped for a safety reason).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import asdict

from cloudguard import exit_codes
from cloudguard.audit.evidence import EvidenceError
from cloudguard.reap.log import ReapLog
from cloudguard.reap.model import Plan, PlanItem, Reaper, ReaperError
from cloudguard.reap.verify import verify

ACTION_FAILED = 1

# Log events.
START, END = "start", "end"
DID_NOT_RUN = "did-not-run"  # evidence or a reaper could not be read: nothing more is done
UNREADABLE = "unreadable"  # one item's live state could not be read: not acted on
SKIPPED = "skipped"  # re-verification said no
WOULD_ACT = "would-act"  # dry run: re-verified, and would be acted on
INTENT, DONE, FAILED = "intent", "done", "failed"
NOT_REACHED = "not-reached"  # the run stopped before this item


def apply_plan(
    plan: Plan,
    *,
    plan_path: str,
    open_reaper: Callable[[str], Reaper],
    controller_tasks: Callable[[], frozenset[str]],
    log: ReapLog,
    execute: bool,
) -> int:
    counts: Counter[str] = Counter()
    log.start(
        mode="apply" if execute else "dry-run",
        plan=plan_path,
        plan_created_at=plan.created_at.isoformat(),
        audit_generated_at=plan.audit_generated_at.isoformat(),
        items=len(plan.items),
    )

    def end(code: int) -> int:
        log.write(END, exit_code=code, counts=dict(counts))
        return code

    try:
        controller_tasks()
    except EvidenceError as exc:
        log.write(DID_NOT_RUN, detail=f"{exc.source}: {exc.reason}", source=exc.source)
        return end(exit_codes.DID_NOT_RUN)

    reapers: dict[str, Reaper] = {}
    try:
        for provider in sorted({item.provider for item in plan.items}):
            try:
                reapers[provider] = open_reaper(provider)
            except ReaperError as exc:
                log.write(DID_NOT_RUN, detail=f"{exc.source}: {exc.reason}", source=exc.source)
                return end(exit_codes.DID_NOT_RUN)
        for index, item in enumerate(plan.items):
            outcome = _one(
                plan, index, item, reapers[item.provider], controller_tasks, log, execute
            )
            counts[outcome] += 1
            if outcome == DID_NOT_RUN:
                for later, rest in enumerate(plan.items[index + 1 :], start=index + 1):
                    log.write(NOT_REACHED, rest, item_index=later)
                    counts[NOT_REACHED] += 1
                break
    finally:
        for reaper in reapers.values():
            reaper.close()

    if counts[DID_NOT_RUN] or counts[UNREADABLE]:
        return end(exit_codes.DID_NOT_RUN)
    return end(ACTION_FAILED if counts[FAILED] else exit_codes.CLEAN)


def _one(
    plan: Plan,
    index: int,
    item: PlanItem,
    reaper: Reaper,
    controller_tasks: Callable[[], frozenset[str]],
    log: ReapLog,
    execute: bool,
) -> str:
    try:
        current = reaper.current(item)
    except Exception as exc:  # a ReadError, or an adapter bug: either way, unknown state
        log.write(UNREADABLE, item, item_index=index, detail=_reason(exc))
        return UNREADABLE
    try:
        # Read again now, not only at the start: a controller that claimed the
        # task while earlier items were being handled must still stop this one.
        tasks = controller_tasks()
    except EvidenceError as exc:
        log.write(DID_NOT_RUN, item, item_index=index, detail=f"{exc.source}: {exc.reason}")
        return DID_NOT_RUN
    skips = verify(item, current, plan.policy, tasks)
    if skips:
        log.write(SKIPPED, item, item_index=index, skips=[asdict(s) for s in skips])
        return SKIPPED
    if not execute:
        log.write(
            WOULD_ACT, item, item_index=index, power_state=current.power_state if current else None
        )
        return WOULD_ACT
    log.write(INTENT, item, item_index=index)
    try:
        reaper.act(item, item.action)
    except Exception as exc:  # outcome unknown is a failure too: someone must look
        log.write(FAILED, item, item_index=index, detail=_reason(exc))
        return FAILED
    log.write(DONE, item, item_index=index)
    return DONE


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ReaperError):
        return f"{exc.source}: {exc.reason}"
    return f"{type(exc).__name__}: {exc}"

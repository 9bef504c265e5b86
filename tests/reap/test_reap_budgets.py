"""Bounded, every step: an item's budget covers its reads and its action's wait, and the
apply has a deadline of its own. The engine on the in-memory cloud, on a clock the test
moves (no test here waits for time to pass)."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest
import reap_fake_adapter as cloud
from named_checks import broken
from reap_helpers import NOW, entry, events, planned_fleet

from cloudguard.audit.cost import bundled_prices
from cloudguard.audit.evidence.interface import EvidenceRequest
from cloudguard.cloud import adapter_registry
from cloudguard.cloud.reaping import ActionUnfinished
from cloudguard.documents.findings import AuditPolicy
from cloudguard.documents.plan import Plan, PlanItem
from cloudguard.documents.reap_log import ReapLog
from cloudguard.reap.apply import apply_plan
from cloudguard.reap.locks import Locks
from cloudguard.reap.rederive import LiveAudit


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    adapters: dict[str, EntryPoint] = {"azure": entry("FakeAdapter"), "aws": entry("FakeAws")}
    monkeypatch.setattr(adapter_registry, "installed_adapters", lambda: adapters)
    plan, home = planned_fleet(tmp_path)
    assert len(plan.items) >= 3, plan.items
    return {"plan": plan, "home": home, "log": tmp_path / "reap.jsonl", "tmp": tmp_path}


def run(world: dict[str, Any], clock: Clock, **bounds: float | None) -> int:
    log = ReapLog(world["log"])
    live_audit = LiveAudit(
        EvidenceRequest(controller_home=str(world["home"])),
        AuditPolicy(leaked_by=(("run-id", "ci-77"),)),
        bundled_prices(),
        lambda: NOW,
    )
    try:
        return apply_plan(
            world["plan"],
            plan_path="plan.json",
            digest="sha256:" + "0" * 64,
            open_reaper=lambda name: cloud.FakeReaper(None),  # type: ignore[arg-type]
            live_audit=live_audit,
            log=log,
            execute=True,
            locks=Locks(world["tmp"] / "run"),
            clock=clock,
            **bounds,  # type: ignore[arg-type]
        )
    finally:
        log.close()


def _item_events(world: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["event"], e["id"]) for e in events(world["log"]) if "id" in e]


def test_past_the_deadline_no_item_is_begun_and_the_rest_are_not_reached(
    world: dict[str, Any],
) -> None:
    plan: Plan = world["plan"]
    clock = Clock()
    first, *rest = plan.items
    cloud.ON_READ[first.id] = lambda: setattr(clock, "now", clock.now + 120)  # a slow read

    code = run(world, clock, item_budget=300, deadline=60)

    acted = [a for a, _ in cloud.ACTED]
    assert acted == [first.id], broken(
        "the-deadline-stops-the-apply", f"items begun past the apply's deadline: {acted}"
    )
    assert code == 75
    reached = [e for e in events(world["log"]) if e["event"] == "not-reached"]
    assert [e["id"] for e in reached] == [i.id for i in rest]
    assert "the apply's deadline (60 s, --deadline) passed" in reached[0]["detail"]


def test_within_the_deadline_every_item_is_begun(world: dict[str, Any]) -> None:
    """The control of the test above: the same slow read, a deadline it stays within."""
    plan: Plan = world["plan"]
    clock = Clock()
    cloud.ON_READ[plan.items[0].id] = lambda: setattr(clock, "now", clock.now + 120)

    assert run(world, clock, item_budget=300, deadline=600) == 0
    assert len(cloud.ACTED) == len(plan.items)


def test_an_item_past_its_budget_is_not_acted_on_and_the_next_goes_on(
    world: dict[str, Any],
) -> None:
    plan: Plan = world["plan"]
    clock = Clock()
    slow, *rest = plan.items
    cloud.ON_READ[slow.id] = lambda: setattr(clock, "now", clock.now + 301)  # 5 min + 1 s

    code = run(world, clock, item_budget=300, deadline=None)

    acted = [a for a, _ in cloud.ACTED]
    assert slow.id not in acted, broken(
        "an-item-past-its-budget-is-not-acted-on",
        f"acted on {slow.name} after its reads took past its budget",
    )
    assert acted == [i.id for i in rest]  # the next items go on
    assert code == 75
    (unreadable,) = [e for e in events(world["log"]) if e["event"] == "unreadable"]
    assert unreadable["id"] == slow.id
    assert (
        "time budget of 300 s per item (--item-budget) spent before its action"
        in (unreadable["detail"])
    )


def test_an_action_not_seen_to_finish_is_failed_and_the_run_is_75(
    world: dict[str, Any],
) -> None:
    plan: Plan = world["plan"]
    first = plan.items[0]

    def unfinished(item: PlanItem) -> None:
        if item.id == first.id:
            raise ActionUnfinished(f"fake {item.id}", "delete sent, not seen to finish")

    cloud.ON_ACT.append(unfinished)

    code = run(world, Clock(), item_budget=300, deadline=None)

    assert code == 75, broken(
        "an-unfinished-action-is-75", f"an action of unknown outcome ended the run {code}"
    )
    assert ("failed", first.id) in _item_events(world)
    assert len(cloud.ACTED) == len(plan.items) - 1  # the next items go on

"""The item budget on the fake ARM: it covers every attempt started inside it, and the wait
for the cloud's operation to finish; an item past it is named, and the run exits 75.

Each test holds the fake for longer than the budget and lets go later (a timer), so a
reaper that does not keep to the budget is seen finishing late rather than hanging."""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Any

import test_azure_reaper
from cloudguard_azure import demo
from named_checks import broken
from test_azure_reaper import Incident, events, writes

incident = test_azure_reaper.incident  # the fake ARM's incident, as the reaper's tests have it

BUDGET = 8.0  # seconds: --item-budget (an item's reads take well under 1 s, 3 s at load 6)
HELD_FOR = 30.0  # how long the fake holds what the budget must not wait for


def _between(first: dict[str, Any], last: dict[str, Any]) -> float:
    """Seconds from one log record to another (their `at`)."""
    taken = datetime.fromisoformat(last["at"]) - datetime.fromisoformat(first["at"])
    return taken.total_seconds()


def _let_go_after(seconds: float, release: object) -> threading.Timer:
    timer = threading.Timer(seconds, release)  # type: ignore[arg-type]
    timer.daemon = True
    timer.start()
    return timer


def test_the_wait_for_a_delete_to_finish_is_inside_the_item_budget(incident: Incident) -> None:
    """The delete is accepted and stays InProgress: apply stops waiting when the item's
    budget ends (not after 30 min), logs it failed, outcome unknown, and exits 75."""
    plan = incident.plan("--action", "delete")
    incident.arm.state.hold_operations = True
    timer = _let_go_after(HELD_FOR, lambda: setattr(incident.arm.state, "hold_operations", False))
    try:
        code, out, log = incident.apply(plan, "--yes", "--item-budget", f"{BUDGET:g}s")
    finally:
        timer.cancel()
        incident.arm.state.hold_operations = False

    record = events(log)
    (sent,) = [i for i, e in enumerate(record) if e["event"] == "intent"]
    intent, outcome = record[sent], record[sent + 1]
    waited = _between(intent, outcome)
    assert waited < BUDGET, broken(
        "the-item-budget-covers-the-wait",
        f"waited {waited:.1f} s for the delete, with a {BUDGET:g} s item budget: {out}",
    )
    assert [e["event"] for e in record] == ["start", "intent", "failed", "end"], out
    assert code == 75, out
    failed = outcome
    assert "not seen to finish" in failed["detail"] and "outcome unknown" in failed["detail"]
    assert writes(incident.arm) == {"DELETE vm_delete": 1}


def test_an_attempt_started_inside_the_budget_ends_inside_it(incident: Incident) -> None:
    """The VM's read is answered only after 60 s: the attempt is cut when the budget ends
    (its read timeout is what remains of the budget, not the transport's 300 s), the item
    is unreadable, named, and nothing is sent."""
    plan = incident.plan()
    incident.arm.faults.slow_pages(1.0, HELD_FOR, match=f"/virtualMachines/{demo.INCIDENT_VM}?")
    incident.arm.faults.reset_counts()

    code, out, log = incident.apply(plan, "--yes", "--item-budget", f"{BUDGET:g}s")

    start, unreadable = (e for e in events(log) if e["event"] in ("start", "unreadable"))
    took = _between(start, unreadable)  # the evidence read and the reaper opened, too
    assert took < HELD_FOR - 15, broken(
        "no-attempt-outlasts-the-item-budget",
        f"the item took {took:.1f} s with a {BUDGET:g} s budget: an attempt outlasted it",
    )
    assert code == 75 and writes(incident.arm) == {}, out
    assert unreadable["name"] == demo.INCIDENT_VM
    assert f"time budget of {BUDGET:g} s per item spent" in unreadable["detail"], unreadable


def test_within_its_budget_the_same_item_is_acted_on(incident: Incident) -> None:
    """The control of the two tests above: a slow read and a held delete that end inside
    the budget are waited for, and the item is done."""
    plan = incident.plan("--action", "delete")
    incident.arm.faults.slow_pages(1.0, 1.0, match=f"/virtualMachines/{demo.INCIDENT_VM}?")
    incident.arm.state.hold_operations = True
    timer = _let_go_after(3.0, lambda: setattr(incident.arm.state, "hold_operations", False))
    try:
        code, out, log = incident.apply(plan, "--yes", "--item-budget", "60s")
    finally:
        timer.cancel()
        incident.arm.state.hold_operations = False

    assert code == 0, out
    assert [e["event"] for e in events(log)] == ["start", "intent", "done", "end"]

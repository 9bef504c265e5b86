"""A single Azure resource (the incident VM) attacked between every pair of requests
`reap apply` makes (issue 32): a protection tag put on it just before request n, for each n
up to its action. Nothing may be sent after the change but when the change arrives with the
action itself (the window)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from cloudguard_azure import demo
from every_request import Cell, attack_before_each_request
from named_checks import broken
from test_azure_reaper import Incident, incident, writes

__all__ = ["incident"]  # the fixture, shared with test_azure_reaper


@pytest.mark.parametrize("action", ["deallocate", "delete"])
def test_a_vm_protected_before_any_request_is_never_acted_on(
    incident: Incident, action: str
) -> None:
    plan = incident.plan(*(("--action", "delete") if action == "delete" else ()))

    def protect(_n: int) -> Callable[[], None]:
        incident.vm.tags["do-not-reap"] = ""
        return unprotect

    def unprotect() -> None:
        still = incident.arm.state.vm(demo.SUB_PILOT, "pilot", demo.INCIDENT_VM)
        if still is not None:
            still.tags.pop("do-not-reap", None)

    def nothing_written(cell: Cell) -> None:
        assert cell.code == 0 and writes(incident.arm) == {}, cell.out

    attacked = attack_before_each_request(
        incident.arm.faults,
        protect,
        lambda: incident.apply(plan, "--yes"),
        actions=("POST ", "DELETE "),
        between=nothing_written,
    )
    cells = [
        {"n": c.n, "before": c.raced_at.split("?")[0], "sent": c.sent, "exit": c.code}
        for c in attacked
    ]
    wrong = [
        f"protected before request {c.n} ({c.raced_at}): {c.sent}"
        for c in attacked
        if c.acted_after_change
    ]
    print(json.dumps(cells))
    assert not wrong, broken("never-acted-on-after-a-change", "\n".join(wrong))
    assert len(attacked) > 3, cells

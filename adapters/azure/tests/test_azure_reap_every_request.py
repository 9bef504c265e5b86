"""A single Azure resource (the incident VM) attacked between every pair of requests
`reap apply` makes (issue 32): a protection tag put on it just before request n, for each n
up to its action. Nothing may be sent after the change but when the change arrives with the
action itself (the window)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cloudguard_azure import demo
from named_checks import broken
from test_azure_reaper import Incident, incident, writes

__all__ = ["incident"]  # the fixture, shared with test_azure_reaper


def _actions(incident: Incident) -> list[str]:
    return [line for line in incident.arm.faults.log if line.startswith(("POST ", "DELETE "))]


@pytest.mark.parametrize("action", ["deallocate", "delete"])
def test_a_vm_protected_before_any_request_is_never_acted_on(
    incident: Incident, action: str
) -> None:
    plan = incident.plan(*(("--action", "delete") if action == "delete" else ()))
    faults = incident.arm.faults
    wrong: list[str] = []
    cells: list[dict[str, Any]] = []
    n = 0
    while True:
        n += 1
        changed: list[bool] = []

        def hook(
            index: int, _method: str, _target: str, n: int = n, changed: Any = changed
        ) -> None:
            if index == n:
                incident.vm.tags["do-not-reap"] = ""
                changed.append(True)

        faults.reset_counts()
        faults.before_answer = hook
        try:
            code, out, _ = incident.apply(plan, "--yes")
        finally:
            faults.before_answer = None
        still = incident.arm.state.vm(demo.SUB_PILOT, "pilot", demo.INCIDENT_VM)
        if still is not None:
            still.tags.pop("do-not-reap", None)
        if not changed:
            pytest.fail(f"apply made fewer than {n} requests and never acted: {out}")
        raced_at = faults.log[n - 1]
        sent = _actions(incident)
        cells.append({"n": n, "before": raced_at.split("?")[0], "sent": sent, "exit": code})
        if raced_at.startswith(("POST ", "DELETE ")):
            break  # changed as the action arrived: the window ARM leaves
        if sent:
            wrong.append(f"protected before request {n} ({raced_at}): {sent}")
            break
        assert code == 0 and writes(incident.arm) == {}, out
    print(json.dumps(cells))
    assert not wrong, broken("never-acted-on-after-a-change", "\n".join(wrong))
    assert n > 3, cells

"""A leaked run's member reaped on its own (its group holds someone else's app, so the plan
is member by member) attacked between every pair of requests `reap apply` makes (issue 32):
a protection tag put on the member just before request n, for each n up to its DELETE.
Nothing may be deleted after the change but when the change arrives with the DELETE itself
(the window). One member at a time, so that each apply is a few requests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from cloudguard_azure import demo
from every_request import Cell, attack_before_each_request
from leaked_run import LeakedRun, leaked_run
from named_checks import broken
from test_azure_reap_kinds import LEAKED_BY, apply, plan_leaked
from test_azure_reaper import Incident, incident

__all__ = ["incident"]  # the fixture, shared with test_azure_reaper

APP = "Microsoft.Web/sites"


def _target(run: LeakedRun, kind: str) -> Any:
    return {"storage-account": run.storage, "public-ip": run.public_ip, "nic": run.nic}[kind]


def _only(incident: Incident, run: LeakedRun, kind: str) -> None:
    """The run's group with the one member under attack, and someone else's app."""
    state = incident.arm.state
    target = _target(run, kind).id.casefold()
    in_group = f"/resourcegroups/{run.group}/".casefold()
    for records in (state.vms, state.disks, state.nics, state.public_ips, state.generic):
        for key in [k for k in records if in_group in k and k != target]:
            del records[key]
    # Left by a VM deleted since: attached to nothing.
    run.nic.virtual_machine = run.nic.public_ip = run.public_ip.ip_configuration = None
    state.add_resource(demo.SUB_PILOT, run.group, APP, "someone-elses-app")


@pytest.mark.parametrize("kind", ["storage-account", "public-ip", "nic"])
def test_a_member_protected_before_any_request_is_never_deleted(
    incident: Incident, kind: str
) -> None:
    incident.audit_args = LEAKED_BY
    run = leaked_run(incident.arm.state, demo.SUB_PILOT)
    _only(incident, run, kind)
    plan = plan_leaked(incident)
    target = _target(run, kind)

    def protect(_n: int) -> Callable[[], None]:
        target.tags["do-not-reap"] = ""
        return lambda: target.tags.pop("do-not-reap", None) and None

    def nothing_failed(cell: Cell) -> None:
        assert cell.code == 0, cell.out

    attacked = attack_before_each_request(
        incident.arm.faults, protect, lambda: apply(incident, plan), between=nothing_failed
    )
    wrong = [
        f"{kind} protected before request {c.n} ({c.raced_at}): {c.sent}"
        for c in attacked
        if c.acted_after_change
    ]
    assert not wrong, broken("a-member-is-never-deleted-after-a-change", "\n".join(wrong))
    assert len(attacked) > 2, attacked[-1]

"""A leaked run's member reaped on its own (its group holds someone else's app, so the plan
is member by member) attacked between every pair of requests `reap apply` makes (issue 32):
a protection tag put on the member just before request n, for each n up to its DELETE.
Nothing may be deleted after the change but when the change arrives with the DELETE itself
(the window). One member at a time, so that each apply is a few requests."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from cloudguard_azure import demo
from cloudguard_azure.fake_arm.network.models import NETWORK, NetworkInterface
from every_request import Cell, attack_before_each_request
from leaked_run import LeakedRun, leaked_run
from named_checks import broken
from test_azure_reap_kinds import LEAKED_BY, apply, plan_leaked
from test_azure_reaper import Incident, incident

__all__ = ["incident"]  # the fixture, shared with test_azure_reaper

APP = "Microsoft.Web/sites"
OTHERS = f"/subscriptions/{demo.SUB_PILOT}/resourceGroups/someone-else"


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


def _protect(target: Any, _n: int) -> Callable[[], None]:
    target.tags["do-not-reap"] = ""
    return lambda: target.tags.pop("do-not-reap", None) and None


def _recreate(target: Any, n: int) -> Callable[[], None]:
    """Deleted and made again under its name: a new createdTime (and, on Microsoft.Network,
    a new resourceGuid). Changed in place: the fake ARM answers from the same record."""
    before = (target.created, getattr(target, "resource_guid", None))
    target.created = before[0] + timedelta(hours=n)
    if before[1] is not None:
        target.resource_guid = str(uuid.uuid4())

    def undo() -> None:
        target.created = before[0]
        if before[1] is not None:
            target.resource_guid = before[1]

    return undo


def _attach(target: Any, _n: int) -> Callable[[], None]:
    """Someone else's VM takes the NIC, or someone else's NIC the public IP: in use again."""
    if isinstance(target, NetworkInterface):
        target.virtual_machine = (
            f"{OTHERS}/providers/Microsoft.Compute/virtualMachines/someone-elses-vm"
        )
        return lambda: setattr(target, "virtual_machine", None)
    target.ip_configuration = f"{OTHERS}{NETWORK}/networkInterfaces/theirs/ipConfigurations/c"
    return lambda: setattr(target, "ip_configuration", None)


CHANGES = {"protected": _protect, "re-created": _recreate, "attached": _attach}


def _attack(incident: Incident, kind: str, change: str) -> None:
    incident.audit_args = LEAKED_BY
    run = leaked_run(incident.arm.state, demo.SUB_PILOT)
    _only(incident, run, kind)
    plan = plan_leaked(incident)
    target = _target(run, kind)

    def nothing_failed(cell: Cell) -> None:
        # Changed before its first read: skipped (0); while it was read: unreadable (75).
        assert cell.code in (0, 75), cell.out

    attacked = attack_before_each_request(
        incident.arm.faults,
        lambda n: CHANGES[change](target, n),
        lambda: apply(incident, plan),
        between=nothing_failed,
    )
    wrong = [
        f"{kind} {change} before request {c.n} ({c.raced_at}): {c.sent}"
        for c in attacked
        if c.acted_after_change
    ]
    assert not wrong, broken("a-member-is-never-deleted-after-a-change", "\n".join(wrong))
    assert len(attacked) > 2, attacked[-1]


@pytest.mark.parametrize("kind", ["storage-account", "public-ip", "nic"])
def test_a_member_protected_before_any_request_is_never_deleted(
    incident: Incident, kind: str
) -> None:
    _attack(incident, kind, "protected")


@pytest.mark.parametrize(
    ("kind", "change"),
    [
        ("storage-account", "re-created"),
        ("public-ip", "re-created"),
        ("public-ip", "attached"),
        ("nic", "re-created"),
        ("nic", "attached"),
    ],
    ids=lambda value: value,
)
def test_a_member_re_created_or_attached_before_any_request_is_never_deleted(
    incident: Incident, kind: str, change: str
) -> None:
    _attack(incident, kind, change)

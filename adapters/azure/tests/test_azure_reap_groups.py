"""A resource group is deleted only if, at the moment of its DELETE, it holds exactly the
members the plan reviewed; and a group that never held only those is reaped member by
member. Through the CLI with the real azure-mgmt-resource against the fake ARM over HTTPS,
with ARM's own races played by the fake: a fresh resource that reads "not found" for a
moment, and a resource created between any two requests apply makes."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta

import pytest
from cloudguard_azure import demo
from cloudguard_azure.fake_arm.resources.models import GenericResource
from every_request import Cell, attack_before_each_request
from leaked_run import LeakedRun, leaked_run
from named_checks import broken
from test_azure_reap_kinds import LEAKED_BY, apply, group_gone, plan_leaked, skip_codes
from test_azure_reaper import Incident, incident, writes

__all__ = ["incident"]  # the fixture, shared with test_azure_reaper

APP = "Microsoft.Web/sites"
RACED = "Microsoft.Automation/automationAccounts"  # sorts before every member's type


@pytest.fixture
def run(incident: Incident) -> LeakedRun:
    incident.audit_args = LEAKED_BY
    return leaked_run(incident.arm.state, demo.SUB_PILOT)


def someone_elses_app(incident: Incident, run: LeakedRun, name: str) -> GenericResource:
    """A web app that is not the fleet's (no tags at all), in the run's group."""
    return incident.arm.state.add_resource(demo.SUB_PILOT, run.group, APP, name)


def test_an_app_that_reads_not_found_holds_the_group_and_is_named(
    incident: Incident, run: LeakedRun
) -> None:
    """Added after the plan, its own read answers 404 ResourceNotFound once (as ARM does
    for a moment after a resource is created): it is not "gone since the listing"."""
    plan = plan_leaked(incident)
    app = someone_elses_app(incident, run, "someone-elses-app")
    incident.arm.state.settle_after(app.id, reads=1)
    incident.arm.faults.reset_counts()

    code, out, log = apply(incident, plan)

    assert writes(incident.arm) == {} and not group_gone(incident, run), broken(
        "the-group-is-held", f"the group was deleted with an app that read 'not found': {out}"
    )
    assert app.id.casefold() in incident.arm.state.generic
    (unreadable,) = [e for e in log if e["event"] == "unreadable"]
    assert app.id in unreadable["detail"] and "not found" in unreadable["detail"], unreadable
    assert code == 75, out


def only_generic_members(incident: Incident, run: LeakedRun) -> None:
    """The run's group with its storage account and cluster only: an apply of a few dozen
    requests, so that one apply per request stays a test of a minute."""
    state = incident.arm.state
    for records in (state.vms, state.disks, state.nics, state.public_ips):
        for key in [k for k in records if f"/resourcegroups/{run.group}/".casefold() in k]:
            del records[key]


@pytest.mark.parametrize("page_size", [50, 1], ids=["one-page", "a-page-per-resource"])
def test_a_resource_created_before_any_request_is_never_deleted_with_the_group(
    incident: Incident, run: LeakedRun, page_size: int
) -> None:
    """For every request apply makes, in turn: someone else's resource is created in the group
    just before that request is answered. No DELETE may go out while the group holds it,
    until the one request after which ARM offers no check: the DELETE itself (the window).
    Its type sorts before every member's, so that with one resource a page it lands before
    the page boundary of a listing under way (ARM's pages are offsets)."""
    only_generic_members(incident, run)
    plan = plan_leaked(incident)
    faults = incident.arm.faults
    faults.page_size = page_size

    def create(n: int) -> Callable[[], None]:
        app = incident.arm.state.add_resource(demo.SUB_PILOT, run.group, RACED, f"raced-{n}")
        return lambda: incident.arm.state.generic.pop(app.id.casefold(), None) and None

    def held(cell: Cell) -> None:
        raced = [r for r in incident.arm.state.generic.values() if r.arm_type == RACED]
        assert raced, f"someone else's resource is gone without a DELETE: {cell.out}"
        was_held = "group-changed" in skip_codes(cell.log)
        was_held = was_held or any(e["event"] == "unreadable" for e in cell.log)
        assert was_held and cell.code in (0, 75) and not group_gone(incident, run), cell

    attacked = attack_before_each_request(
        faults, create, lambda: apply(incident, plan), between=held
    )
    wrong = [
        f"raced-{c.n}, created before request {c.n} ({c.raced_at}): {c.sent}; {c.out}"
        for c in attacked
        if c.acted_after_change
    ]
    n, code, out = attacked[-1].n, attacked[-1].code, attacked[-1].out
    assert not wrong, broken("never-deleted-with-the-group", "\n".join(wrong))
    assert n > 5, f"apply made only {n} requests up to the DELETE: {faults.log}"
    # The last request before the DELETE is the group's listing, and nothing else.
    before = faults.log[n - 2]
    assert f"/resourcegroups/{run.group}/resources?".casefold() in before.casefold(), broken(
        "listed-right-before-the-delete", f"the request before the DELETE was {before}"
    )
    assert group_gone(incident, run) and code == 0, out


def _protect_storage(incident: Incident, run: LeakedRun, n: int) -> Callable[[], None]:
    run.storage.tags["do-not-reap"] = "yes"
    return lambda: run.storage.tags.pop("do-not-reap", None) and None


def _recreate_storage(incident: Incident, run: LeakedRun, n: int) -> Callable[[], None]:
    state = incident.arm.state
    with state.lock:
        original = state.generic.pop(run.storage.id.casefold())
        state.add_resource(
            demo.SUB_PILOT, run.group, original.arm_type, original.name,
            tags=original.tags, created=original.created + timedelta(hours=n),
        )  # fmt: skip

    def undo() -> None:
        state.generic[original.id.casefold()] = original

    return undo


MEMBER_CHANGES = {"protected": _protect_storage, "re-created": _recreate_storage}


@pytest.mark.parametrize("change", list(MEMBER_CHANGES))
def test_a_member_changed_before_any_request_is_never_deleted_with_the_group(
    incident: Incident, run: LeakedRun, change: str
) -> None:
    """For every request apply makes, in turn: a member is protected (`do-not-reap`) or
    re-created under its name just before that request is answered. No DELETE may go out
    after it, until the DELETE itself (the window)."""
    only_generic_members(incident, run)
    plan = plan_leaked(incident)

    def not_deleted(cell: Cell) -> None:
        assert cell.code in (0, 75) and not group_gone(incident, run), cell.out

    attacked = attack_before_each_request(
        incident.arm.faults,
        lambda n: MEMBER_CHANGES[change](incident, run, n),
        lambda: apply(incident, plan),
        between=not_deleted,
    )
    wrong = [
        f"{change} before request {c.n} ({c.raced_at}): {c.sent}; {c.out}"
        for c in attacked
        if c.acted_after_change
    ]
    n, out = attacked[-1].n, attacked[-1].out
    assert not wrong, broken("never-deleted-changed", "\n".join(wrong))
    assert n > 5 and group_gone(incident, run), out


def test_the_window_between_the_last_listing_and_the_delete(
    incident: Incident, run: LeakedRun, capsys: pytest.CaptureFixture[str]
) -> None:
    """Measured on the fake ARM with 50 ms per request: the group's last listing arrives, is
    answered, and the DELETE is the next request; the window is that answer's way back and the
    DELETE's way out (printed, for docs/reap.md)."""
    plan = plan_leaked(incident)
    faults = incident.arm.faults
    faults.latency = 0.05
    faults.reset_counts()

    code, out, _ = apply(incident, plan)

    assert code == 0, out
    index = next(i for i, line in enumerate(faults.log) if line.startswith("DELETE "))
    assert "/resources?" in faults.log[index - 1], faults.log[index - 1]
    window = faults.arrivals[index] - faults.arrivals[index - 1] - faults.latency
    with capsys.disabled():
        print(f"\nwindow between the last listing's answer and the DELETE: {window * 1000:.1f} ms")
    assert window < 0.25, f"{window * 1000:.0f} ms between the last listing and the DELETE"


def test_a_member_of_the_plan_gone_since_is_accepted_only_if_no_listing_shows_it(
    incident: Incident, run: LeakedRun
) -> None:
    """The storage account deleted by someone since the plan: absent from the listing and
    its own read says 404: the group goes (the last listing does not list it either)."""
    plan = plan_leaked(incident)
    del incident.arm.state.generic[run.storage.id.casefold()]
    incident.arm.faults.reset_counts()

    code, out, _ = apply(incident, plan)

    assert writes(incident.arm) == {"DELETE resource_group_delete": 1}, out
    assert group_gone(incident, run) and code == 0, out


def test_a_member_read_that_fails_holds_the_group_named(incident: Incident, run: LeakedRun) -> None:
    plan = plan_leaked(incident)
    incident.arm.faults.inject(503, match=f"/{run.cluster.name}?", times=20)
    incident.arm.faults.reset_counts()

    code, out, log = apply(incident, plan, "--retries", "1")

    assert writes(incident.arm) == {} and not group_gone(incident, run), out
    (unreadable,) = [e for e in log if e["event"] == "unreadable"]
    assert run.cluster.id in unreadable["detail"], unreadable
    assert code == 75, out


def test_a_group_that_held_someone_elses_app_from_the_start_is_reaped_member_by_member(
    incident: Incident, run: LeakedRun
) -> None:
    app = someone_elses_app(incident, run, "someone-elses-app")
    plan_path = plan_leaked(incident)
    plan = json.loads(plan_path.read_text())

    kinds = [i["kind"] for i in plan["items"]]
    assert "resource-group" not in kinds, broken(
        "planned-member-by-member", f"the group is planned whole: {kinds}"
    )
    (held,) = [n for n in plan["not_planned"] if n["name"] == run.group]
    assert "not the fleet's" in held["why"] and app.id in held["why"], held
    incident.arm.faults.reset_counts()

    code, out, _ = apply(incident, plan_path)

    assert code == 0, out
    left = {g.name for g in incident.arm.state.generic.values()}
    assert left == {app.name}, broken("what-can-be-reaped-is-reaped", f"left: {left}; {out}")
    assert not incident.arm.state.vms_in(demo.SUB_PILOT, run.group)
    assert not group_gone(incident, run)
    assert "DELETE resource_group_delete" not in writes(incident.arm)

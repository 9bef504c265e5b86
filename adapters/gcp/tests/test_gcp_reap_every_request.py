"""`reap apply` on Google Cloud attacked between every pair of its requests: a change made by
someone else just before request k, for each k from the first read to the action itself, and
no wrong action.

A wrong action is one carried out on what is no longer the reviewed resource in its reviewed
state. Before the read, every change must be seen: a skip, nothing sent. Just before the
action itself nothing can be seen any more: a re-creation is answered 404 (the action names
the reviewed id), deletion protection is refused by Compute (400); both are `failed`, nothing
deleted. A label changed then is the window docs/gcp.md names.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from fake_gcp import FakeGcp, Instance, serve
from gcp_reaping import ORPHAN_TASK, PROJECT, ZONE, Fleet, events, make_fleet, skip_codes
from named_checks import broken


# Each change is made in the fake's request handler: it must not raise. After the delete the
# orphan is gone: there is nothing left to protect, and a re-creation is only a new instance.
def _re_create(fleet: Fleet) -> None:
    orphan = fleet.instance("vm-orphan")
    if orphan is not None:
        fleet.gcp.world.instances.remove(orphan)
    fleet.gcp.world.instances.append(
        Instance(PROJECT, ZONE, "vm-orphan", labels={"task-id": ORPHAN_TASK})
    )


def _protect(fleet: Fleet) -> None:
    if (orphan := fleet.instance("vm-orphan")) is not None:
        orphan.deletion_protection = True


def _keep_label(fleet: Fleet) -> None:
    if (orphan := fleet.instance("vm-orphan")) is not None:
        orphan.labels["do-not-reap"] = ""


CHANGES: dict[str, Callable[[Fleet], None]] = {
    "re-created": _re_create,
    "deletion-protection": _protect,
    "keep-label": _keep_label,
}
# What a change seen by the read is skipped as.
SEEN_AS = {
    "re-created": {"gone", "not-the-planned-resource"},
    "deletion-protection": {"protected"},
    "keep-label": {"protected"},
}


def _fresh(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


def _requests_of_one_apply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    with serve() as gcp:
        fleet = make_fleet(gcp, _fresh(tmp_path / "probe"), monkeypatch)
        plan = fleet.plan("--action", "delete")
        seen: list[str] = []
        gcp.before = seen.append
        code, out, _ = fleet.apply(plan, "--yes")
        assert code == 0, out
        return seen


def test_a_change_before_any_request_of_apply_is_never_a_wrong_action(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    requests = _requests_of_one_apply(tmp_path, monkeypatch)
    assert requests[:2] == ["instances.get", "instances.delete"], requests
    for k, request in enumerate(requests):
        for change, make in CHANGES.items():
            with serve() as gcp:
                fleet = make_fleet(gcp, _fresh(tmp_path / f"{k}-{change}"), monkeypatch)
                plan = fleet.plan("--action", "delete")
                orphan = fleet.instance("vm-orphan")
                count = [0]

                def before(
                    operation: str, fleet: Fleet = fleet, make=make, count=count, at: int = k
                ) -> None:
                    if count[0] == at:
                        make(fleet)
                    count[0] += 1

                gcp.before = before
                code, _, records = fleet.apply(plan, "--yes")
                _judge(gcp, fleet, orphan, k, request, change, code, records)


def _judge(
    gcp: FakeGcp,
    fleet: Fleet,
    orphan: Instance | None,
    k: int,
    request: str,
    change: str,
    code: int,
    records: list[dict[str, object]],
) -> None:
    where = f"{change} before request {k} ({request})"
    if request == "instances.get":  # the read sees it: skipped, nothing sent
        assert gcp.actions == [], broken("every-change-seen", f"{where}: acted {gcp.actions}")
        assert set(skip_codes(records)) & SEEN_AS[change], f"{where}: {records}"
        return
    if request == "instances.delete" and change != "keep-label":
        # Too late to be seen: Compute itself refuses, nothing is deleted, the run is red.
        assert gcp.actions == [], broken("every-change-seen", f"{where}: acted {gcp.actions}")
        assert "failed" in events(records) and code == 1, f"{where}: {code} {records}"
        assert fleet.instance("vm-orphan") is not None
        return
    # After the action (its Operation's wait), or the label window: the reviewed one acted on,
    # and the run ends as it would have.
    assert orphan is not None
    assert [a[3] for a in gcp.actions] == [orphan.id], f"{where}: {gcp.actions}"
    assert code == 0 and "done" in events(records), f"{where}: {code} {records}"

"""`reap apply` on Google Cloud attacked between every pair of its requests: a change made by
someone else just before request k, for each k from the first read to the action itself, and
no wrong action; for an instance, and for each kind a leaked run leaves that lives elsewhere
(a snapshot and a global address, global; a regional disk).

A wrong action is one carried out on what is no longer the reviewed resource in its reviewed
state. Before the read, every change must be seen: a skip, nothing sent. Just before the
action itself nothing can be seen any more: a re-creation is answered 404 (the action names
the reviewed id), deletion protection is refused by Compute (400); both are `failed`, nothing
deleted. A label changed then is the window docs/gcp.md names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fake_gcp import Address, Disk, FakeGcp, Instance, Snapshot, serve, unique_id
from gcp_leaked_run import LABELS, RUN
from gcp_reaping import ORPHAN_TASK, PROJECT, REGION, ZONE, Fleet, events, make_fleet, skip_codes
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
    "attached": {"attached"},
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


# -- the kinds a leaked run leaves besides instances -------------------------------------------

Target = Snapshot | Address | Disk


def _snapshot() -> Target:
    return Snapshot(PROJECT, "snap-run", labels=dict(LABELS))


def _global_address() -> Target:
    return Address(PROJECT, "global", "ip-run-global", labels=dict(LABELS))


def _regional_disk() -> Target:
    return Disk(PROJECT, "", "shared-run", region=REGION, labels=dict(LABELS))


KINDS: dict[str, Callable[[], Target]] = {
    "snapshot": _snapshot,
    "global-address": _global_address,
    "regional-disk": _regional_disk,
}


def _pool(gcp: FakeGcp, target: Target) -> list[Any]:
    world = gcp.world
    if isinstance(target, Snapshot):
        return world.snapshots
    return world.addresses if isinstance(target, Address) else world.disks


def _target_changes(gcp: FakeGcp, target: Target) -> dict[str, Callable[[], None]]:
    """Someone else's change to the planned resource (none once it is deleted: there is
    nothing left to protect or attach, and a re-creation is only a new resource)."""
    pool = _pool(gcp, target)

    def re_create() -> None:
        if target in pool:
            pool.remove(target)
        pool.append(replace(target, id=unique_id(), labels=dict(target.labels)))

    def attach() -> None:
        if isinstance(target, Address):
            target.status = "IN_USE"
        target.users.append("vm-healthy")  # type: ignore[union-attr]

    def keep_label() -> None:
        target.labels["do-not-reap"] = ""

    changes = {"re-created": re_create, "keep-label": keep_label}
    if not isinstance(target, Snapshot):  # a snapshot has no users
        changes["attached"] = attach
    return changes


def _leaked_fleet(
    gcp: FakeGcp, path: Path, mp: pytest.MonkeyPatch, make: Callable[[], Target]
) -> tuple[Fleet, Target, Path]:
    fleet = make_fleet(gcp, _fresh(path), mp)
    target = make()
    _pool(gcp, target).append(target)
    plan = fleet.plan("--verdict", "leaked", "--action", "delete", "--delete-data",
                      "disk,snapshot", audit=("--leaked-by", f"ci-run={RUN}"))  # fmt: skip
    return fleet, target, plan


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_change_before_any_request_of_apply_to_another_kind_is_never_a_wrong_action(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve() as gcp:
        fleet, _, plan = _leaked_fleet(gcp, tmp_path / "probe", monkeypatch, KINDS[kind])
        requests: list[str] = []
        gcp.before = requests.append
        code, out, _ = fleet.apply(plan, "--yes", "--leaked-by", f"ci-run={RUN}")
        assert code == 0, out
    assert [r.split(".")[1] for r in requests[:2]] == ["get", "delete"], requests
    for k, request in enumerate(requests):
        for change in ("re-created", "keep-label", "attached"):
            with serve() as gcp:
                where = tmp_path / f"{k}-{change}"
                fleet, target, plan = _leaked_fleet(gcp, where, monkeypatch, KINDS[kind])
                changes = _target_changes(gcp, target)
                if change not in changes:
                    continue
                count = [0]

                def before(operation: str, make=changes[change], count=count, at: int = k) -> None:
                    if count[0] == at:
                        make()
                    count[0] += 1

                gcp.before = before
                code, _, records = fleet.apply(plan, "--yes", "--leaked-by", f"ci-run={RUN}")
                _judge_kind(gcp, target, f"{kind}: {change} before request {k} ({request})",
                            request, change, code, records)  # fmt: skip


def _judge_kind(
    gcp: FakeGcp,
    target: Target,
    where: str,
    request: str,
    change: str,
    code: int,
    records: list[dict[str, object]],
) -> None:
    if request.endswith(".get"):  # the read sees it: skipped, nothing sent
        assert gcp.actions == [], broken("every-change-seen", f"{where}: acted {gcp.actions}")
        assert set(skip_codes(records)) & SEEN_AS[change], broken(
            "every-change-seen", f"{where}: not skipped as {SEEN_AS[change]}: {records}"
        )
        return
    if request.endswith(".delete") and change != "keep-label":
        # Too late to be seen: Compute refuses (404 for another id, 400 in use), nothing is
        # deleted, the run is red.
        assert gcp.actions == [], broken("every-change-seen", f"{where}: acted {gcp.actions}")
        assert "failed" in events(records) and code == 1, f"{where}: {code} {records}"
        return
    # After the action, or the label window: the reviewed one acted on, the run ends as it
    # would have.
    assert [a[3] for a in gcp.actions] == [target.id], f"{where}: {gcp.actions}"
    assert code == 0 and "done" in events(records), f"{where}: {code} {records}"

"""Every kind the AWS reaper reaps, attacked between every pair of requests `reap apply`
makes (issue 32): a change made by someone else just before request k, for each k from the
first read to the action itself, and no wrong action.

A wrong action is the action sent after a change and carried out: the resource acted on
was no longer the reviewed one in its reviewed state. Before every read request, the change
must be seen: the item is skipped with the change's reason, nothing sent. Just before the
action request itself nothing can be seen any more (the window docs/reap.md names): an
attachment or protection made then is refused by EC2 / ELB themselves (the action fails,
nothing deleted); a tag changed then is the window.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from aws_every_request import (
    ACTIONS,
    CHANGES,
    RECREATED,
    Wire,
    apply,
    exists,
    fresh,
    one_item,
    template,
)
from aws_helpers import reap_workspace
from aws_leaked_run import leaked_run
from botocore.endpoint import Endpoint
from named_checks import broken

ACCOUNT = "123456789012"
KINDS = ("vm", "disk", "snapshot", "public-ip", "nic", "security-group", "load-balancer")
# The skip each change must be reported with, when seen.
REASONS = {
    "keep-tag": {"protected"},
    "not-the-runs": {"verdict-changed"},
    "attached": {"attached"},
    "protected": {"protected"},
    "re-created": {"gone", "not-the-planned-resource", "tags-unreadable"},
}


# One audit and plan for the module (ids are swapped), and the controller home its
# evidence names (a plan is applied with the evidence it was made from).
_TEMPLATE: list[tuple[dict[str, Any], Path]] = []


@pytest.fixture
def plan_of(
    endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, Any], Path]:
    reap_workspace(tmp_path, monkeypatch, ACCOUNT)
    if not _TEMPLATE:
        leaked_run(endpoint)
        _TEMPLATE.append((template(endpoint, tmp_path), tmp_path))
    return _TEMPLATE[0]


def attack(
    endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    planned: tuple[dict[str, Any], Path], kind: str,
) -> list[dict[str, Any]]:  # fmt: skip
    """Each (gap, change) once, on a fresh resource: what apply did."""
    document, home = planned
    wire = Wire()
    monkeypatch.setattr(Endpoint, "_send", wire.hook(Endpoint._send))
    rid = fresh(endpoint, kind)
    wire.sent.clear()
    code, out, _ = apply(endpoint, home, one_item(document, kind, rid, tmp_path / "p.json"))
    assert code == 0 and not exists(endpoint, kind, rid), out
    recorded = list(wire.sent)
    act = next(i for i, op in enumerate(recorded) if op in ACTIONS)
    outcomes = []
    for name in [c for c, (_, kinds_) in CHANGES.items() if kind in kinds_]:
        change = CHANGES[name][0]
        for k in range(1, act + 1):  # just before request k (k - 1 answered)
            rid = fresh(endpoint, kind)
            wire.sent.clear()
            wire.before = {k: lambda rid=rid, change=change: change(endpoint, kind, rid)}
            path = one_item(document, kind, rid, tmp_path / "p.json")
            code, out, log = apply(endpoint, home, path)
            sent = [op for op in wire.sent if op in ACTIONS]
            skips = sorted({s["code"] for e in log if e["event"] == "skipped" for s in e["skips"]})
            events = [e["event"] for e in log if e["event"] not in ("start", "end")]
            made = RECREATED.pop() if name == "re-created" and RECREATED else None
            outcome = {
                "kind": kind, "gap": f"before {recorded[k]} (#{k})", "k": k, "final": k == act,
                "change": name, "acted": bool(sent), "still-there": exists(endpoint, kind, rid),
                "new-one-there": exists(endpoint, kind, made) if made else None,
                "events": events, "skips": skips, "exit": code,
            }  # fmt: skip
            outcomes.append({**outcome, "outcome": judged(outcome, recorded)})
    if target := os.environ.get("CLOUDGUARD_ATTACK_MATRIX"):
        with open(target, "a") as matrix:
            matrix.writelines(json.dumps(o) + "\n" for o in outcomes)
    return outcomes


# The read that sees each change (the change made before it must be seen, nothing sent).
_TAGS_READ = {
    "vm": "DescribeInstances", "disk": "DescribeVolumes", "snapshot": "DescribeSnapshots",
    "public-ip": "DescribeAddresses", "nic": "DescribeNetworkInterfaces",
    "security-group": "DescribeSecurityGroups", "load-balancer": "DescribeTags",
}  # fmt: skip
SEEN_BY = {
    **{(kind, "keep-tag"): op for kind, op in _TAGS_READ.items()},
    **{(kind, "not-the-runs"): op for kind, op in _TAGS_READ.items()},
    ("disk", "attached"): "DescribeVolumes",
    ("public-ip", "attached"): "DescribeAddresses",
    ("nic", "attached"): "DescribeNetworkInterfaces",
    ("security-group", "attached"): "DescribeNetworkInterfaces",
    ("vm", "protected"): "DescribeInstanceAttribute",  # disableApiTermination, read first
    ("load-balancer", "protected"): "DescribeLoadBalancerAttributes",
    ("load-balancer", "re-created"): "DescribeLoadBalancers",
}
# What AWS refuses and moto does not model: deleting an attached network interface
# (InvalidNetworkInterface.InUse), releasing an associated address (InvalidIPAddress.InUse),
# deleting a security group an interface uses (DependencyViolation), a load balancer with
# deletion protection (OperationNotPermitted). Made after the read that would see it, moto
# carries the delete out: recorded ("moto-does-not-refuse"), not counted. moto refuses the
# rest (an attached volume, a protected instance).
MOTO_DOES_NOT_REFUSE = {
    ("nic", "attached"),
    ("public-ip", "attached"),
    ("security-group", "attached"),
    ("load-balancer", "protected"),
}


def judged(o: dict[str, Any], recorded: list[str]) -> str:
    """One cell of the matrix: seen (skipped with its reason), refused (by the cloud),
    window (a tag changed after the last read), moto-does-not-refuse, or WRONG."""
    seen_by = recorded.index(SEEN_BY[(o["kind"], o["change"])])
    if o["change"] == "re-created":
        if o["new-one-there"] is False:
            return "WRONG"
        return "seen" if not o["acted"] and set(o["skips"]) & REASONS["re-created"] else (
            "acted on the gone one" if o["k"] > seen_by else "WRONG")  # fmt: skip
    if o["change"] in ("keep-tag", "not-the-runs"):
        # The tags are the last read: only a change just before the action is the window
        # (docs/reap.md); before any other request it must be seen.
        if o["final"]:
            return "window"
        seen_by = o["k"]
    if o["k"] <= seen_by:
        return "seen" if not o["acted"] and set(o["skips"]) & REASONS[o["change"]] else "WRONG"
    if o["still-there"] and o["events"] == ["intent", "failed"]:
        return "refused"
    if (o["kind"], o["change"]) in MOTO_DOES_NOT_REFUSE:
        return "moto-does-not-refuse"
    return "WRONG"


@pytest.mark.parametrize("kind", KINDS)
def test_a_change_before_any_request_is_never_acted_on(
    endpoint: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    plan_of: tuple[dict[str, Any], Path],
    kind: str,
) -> None:
    outcomes = attack(endpoint, tmp_path, monkeypatch, plan_of, kind)

    wrong = [o for o in outcomes if o["outcome"] == "WRONG"]
    assert not wrong, broken("never-acted-on-after-a-change", json.dumps(wrong, indent=1))

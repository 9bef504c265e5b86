"""Every kind the AWS reaper reaps, attacked between every pair of requests `reap apply`
makes (issue 32): a change made by someone else just before request k, for each k from the
first read to the action itself, and no wrong action.

A wrong action is the action sent after a change and carried out: the resource acted on
was no longer the reviewed one in its reviewed state. Before every read request, the change
must be seen: the item is skipped with the change's reason, nothing sent. Just before the
action request itself nothing can be seen any more (the window docs/reap.md names): an
attachment or protection made then is refused by EC2 / ELB themselves (the action fails,
nothing deleted, the log names AWS's code, exit 1); a tag changed then is the window, and
so is an Elastic IP associated in a default VPC (AWS's ReleaseAddress disassociates it).
The reaper talks to moto through the refusing proxy (aws_refusing_proxy.py), which refuses
the deletes AWS refuses and moto does not (aws_delete_refusals.py,
test_aws_delete_refusals.py).
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
from aws_refusing_proxy import refusing_proxy
from botocore.endpoint import Endpoint
from named_checks import broken

ACCOUNT = "123456789012"
KINDS = ("vm", "disk", "snapshot", "public-ip", "nic", "security-group", "load-balancer")
# The skip each change must be reported with, when seen.
REASONS = {
    "keep-tag": {"protected"},
    "not-the-runs": {"verdict-changed"},
    "attached": {"attached"},
    "attached-in-own-vpc": {"attached"},
    "named-by-an-inbound-rule": {"attached"},
    "named-by-an-outbound-rule": {"attached"},
    "used-by-an-instance": {"attached"},
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
    """Each (gap, change) once, on a fresh resource: what apply did. Apply talks to moto
    through the refusing proxy (AWS's refusals); the changes are made in moto directly."""
    with refusing_proxy(endpoint) as (via, _):
        return _attack(endpoint, via, tmp_path, monkeypatch, planned, kind)


def _attack(
    endpoint: str, via: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    planned: tuple[dict[str, Any], Path], kind: str,
) -> list[dict[str, Any]]:  # fmt: skip
    document, home = planned
    wire = Wire()
    monkeypatch.setattr(Endpoint, "_send", wire.hook(Endpoint._send))
    rid = fresh(endpoint, kind)
    wire.sent.clear()
    code, out, _ = apply(via, home, one_item(document, kind, rid, tmp_path / "p.json"))
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
            code, out, log = apply(via, home, path)
            sent = [op for op in wire.sent if op in ACTIONS]
            skips = sorted({s["code"] for e in log if e["event"] == "skipped" for s in e["skips"]})
            events = [e["event"] for e in log if e["event"] not in ("start", "end")]
            made = RECREATED.pop() if name == "re-created" and RECREATED else None
            outcome = {
                "kind": kind, "gap": f"before {recorded[k]} (#{k})", "k": k, "final": k == act,
                "change": name, "acted": bool(sent), "still-there": exists(endpoint, kind, rid),
                "new-one-there": exists(endpoint, kind, made) if made else None,
                "events": events, "skips": skips, "exit": code,
                "failed": " ".join(e.get("detail", "") for e in log if e["event"] == "failed"),
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
    ("public-ip", "attached-in-own-vpc"): "DescribeAddresses",
    ("nic", "attached"): "DescribeNetworkInterfaces",
    ("security-group", "attached"): "DescribeNetworkInterfaces",
    ("security-group", "used-by-an-instance"): "DescribeNetworkInterfaces",
    # The rules that name it: the group's first and second DescribeSecurityGroups.
    ("security-group", "named-by-an-inbound-rule"): ("DescribeSecurityGroups", 0),
    ("security-group", "named-by-an-outbound-rule"): ("DescribeSecurityGroups", 1),
    ("vm", "protected"): "DescribeInstanceAttribute",  # disableApiTermination, read first
    ("load-balancer", "protected"): "DescribeLoadBalancerAttributes",
    ("load-balancer", "re-created"): "DescribeLoadBalancers",
}
# What AWS answers the action with when the change came after the read that sees it: moto
# itself (an attached volume, a protected instance) or the refusing proxy for AWS (the rest).
REFUSED_WITH = {
    ("disk", "attached"): "VolumeInUse",
    ("nic", "attached"): "InvalidParameterValue",
    ("public-ip", "attached-in-own-vpc"): "InvalidIPAddress.InUse",
    ("security-group", "attached"): "DependencyViolation",
    ("security-group", "used-by-an-instance"): "DependencyViolation",
    ("security-group", "named-by-an-inbound-rule"): "DependencyViolation",
    ("security-group", "named-by-an-outbound-rule"): "DependencyViolation",
    ("vm", "protected"): "OperationNotPermitted",
    ("load-balancer", "protected"): "OperationNotPermitted",
}
# What AWS carries out although the change held it: an Elastic IP associated in a default
# VPC, which ReleaseAddress disassociates and releases (AWS's API reference). Its
# association and its tags are one read (DescribeAddresses): the window is the tag's.
RELEASED_ANYWAY = {("public-ip", "attached")}


def judged(o: dict[str, Any], recorded: list[str]) -> str:
    """One cell of the matrix: seen (skipped with its reason), refused (by the cloud, and
    logged failed naming its code), window (a tag changed, or an address associated in a
    default VPC, after the last read), REFUSAL-NOT-LOGGED-FAILED or WRONG."""
    seen = SEEN_BY[(o["kind"], o["change"])]
    op, nth = seen if isinstance(seen, tuple) else (seen, 0)
    made = [i for i, sent in enumerate(recorded) if sent == op]
    # A read that was not made sees nothing: the change must then be seen before every request.
    seen_by = made[nth] if nth < len(made) else len(recorded) - 1
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
    code = REFUSED_WITH.get((o["kind"], o["change"]))
    if code is not None and o["still-there"]:
        logged = o["events"] == ["intent", "failed"] and o["exit"] == 1 and code in o["failed"]
        return "refused" if logged else "REFUSAL-NOT-LOGGED-FAILED"
    if (o["kind"], o["change"]) in RELEASED_ANYWAY and o["final"]:
        return "window"
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
    unlogged = [o for o in outcomes if o["outcome"] == "REFUSAL-NOT-LOGGED-FAILED"]
    found = {"never-acted-on-after-a-change": wrong, "an-aws-refusal-is-logged-failed": unlogged}
    checks = [name for name, cells in found.items() if cells]
    assert not checks, broken(checks, json.dumps(wrong + unlogged, indent=1))

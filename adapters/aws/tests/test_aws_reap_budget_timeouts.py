"""`reap apply --item-budget` on AWS: no attempt outlasts the budget (issue 32). botocore
cannot shorten an attempt as the budget runs down, so each read client's connect and read
timeouts are the budget itself: a read whose answer is held far longer is cut at the
budget, the next attempt is not sent (the budget is spent), the item is unreadable (75).
Held by a loopback proxy in front of moto (throttling_proxy); the held answer is a 503."""

from __future__ import annotations

import time

import pytest
from named_checks import broken
from test_aws_reaper import Fleet, _apply_through, fleet, state_of
from throttling_proxy import Throttling, throttling_proxy

__all__ = ["fleet"]  # the fixture, shared with test_aws_reaper
BUDGET = 2.0  # seconds: --item-budget
HELD = 14.0  # seconds the first answer of the read is held (botocore's own timeout is 60 s)


@pytest.mark.parametrize("read", ["GetCallerIdentity", "DescribeInstances"])
def test_an_attempt_started_inside_the_budget_ends_inside_it(fleet: Fleet, read: str) -> None:
    plan = fleet.plan()
    throttling = Throttling(read, first=1, hold=HELD)
    with throttling_proxy(fleet.endpoint, throttling) as proxy:
        began = time.monotonic()
        code, out, records = _apply_through(
            fleet, proxy, plan, "--retries", "8", "--item-budget", f"{BUDGET:g}s"
        )
        took = time.monotonic() - began

    assert took < HELD - 6, broken(
        "no-aws-attempt-outlasts-the-item-budget",
        f"apply took {took:.1f} s with a {BUDGET:g} s item budget: the {read} attempt "
        f"outlasted it (held {HELD:g} s)",
    )
    assert code == 75, out
    (unreadable,) = [e for e in records if e["event"] == "unreadable"]
    assert unreadable["id"] == fleet.orphan
    assert state_of(fleet.endpoint, fleet.orphan) == "running"

"""Sweeps that ride out throttling: the retry budget, resumed pages, resets, quota pacing.

Against the fake ARM through the real azure-mgmt-compute pipeline. Waits are
test-sized (Retry-After in milliseconds, small backoffs), and nothing here
asserts on the clock: the fake's request log and answer counts are the
evidence.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from azure.core.exceptions import IncompleteReadError
from azure.core.rest import HttpRequest
from azure.mgmt.compute import ComputeManagementClient
from azure_helpers import SUB_A, SUB_B, SUB_C, request_for
from cloudguard_azure import retry
from cloudguard_azure.adapter import AzureAdapter, RetrySettings, client_options
from cloudguard_azure.budget import Clock
from cloudguard_azure.fake_arm import FakeArm
from cloudguard_azure.paging import Listing
from named_checks import broken

# Test-sized waits: backoffs of milliseconds, the default retry budget.
QUICK = RetrySettings(backoff_factor=0.005, backoff_max=0.02)


def sweep(arm: FakeArm, settings: RetrySettings = QUICK, **request: Any) -> Any:
    return AzureAdapter(retry=settings).sweep(request_for(arm, **request))


def found(result: Any) -> set[tuple[str, str, str]]:
    return {(r.kind, r.id.casefold(), r.power_state) for r in result.resources}


def pages_read(arm: FakeArm, subscription: str) -> list[str]:
    """The $skiptoken of every VM-list request for `subscription`, in order ("" = page 1)."""
    tokens = []
    for line in arm.faults.log:
        if f"/subscriptions/{subscription}/".casefold() in line.casefold() and (
            "/virtualMachines?" in line
        ):
            tokens.append(line.partition("$skiptoken=")[2])
    return tokens


# -- the retry budget ----------------------------------------------------------------------


def test_the_retry_budget_reaches_every_azure_core_counter() -> None:
    # azure-core stops at the smallest of these, and three of them default to 3.
    policy = retry.BudgetedRetryPolicy(Clock(RetrySettings(total=7)))
    counters = policy.configure_retries({})
    # A connection that cannot be made is budgeted apart (issue 36): a few quick tries.
    assert [counters[k] for k in ("total", "status", "read", "connect")] == [7, 7, 7, 2], broken(
        "the-budget-reaches-every-counter",
        "the retry budget does not reach every azure-core retry counter",
    )


def test_the_reaper_retries_with_the_sweeps_budget_and_its_time_budget_is_per_item() -> None:
    request = request_for_endpoint(retries=12, item_budget=timedelta(seconds=7))
    settings = AzureAdapter()._settings(request)
    assert (settings.total, settings.time_budget) == (12, 7.0)
    # The sweep's own budget is per subscription: no item budget, the default deadline.
    assert AzureAdapter()._settings(request_for_endpoint()).time_budget == 1800.0


class _Longest:
    """Full jitter's draw at its ceiling: every backoff is the longest it may be."""

    def uniform(self, low: float, high: float) -> float:
        return high


class _DeadEndpoint:
    """A transport whose every connection is refused, counting the attempts and the waits."""

    def __init__(self) -> None:
        self.attempts = 0
        self.waits: list[float] = []

    def __enter__(self) -> _DeadEndpoint:
        return self

    def __exit__(self, *args: object) -> None:
        pass

    def open(self) -> None:
        pass

    def close(self) -> None:
        pass

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)

    def send(self, request: Any, **kwargs: Any) -> Any:
        from azure.core.exceptions import ServiceRequestError

        self.attempts += 1
        raise ServiceRequestError(
            "HTTPSConnection(host='127.0.0.1', port=9): Failed to establish a new connection: "
            "[Errno 111] Connection refused"
        )


def _read_through(policy: retry.BudgetedRetryPolicy, transport: _DeadEndpoint) -> Exception:
    from azure.core.pipeline import Pipeline

    with pytest.raises(Exception) as raised:
        Pipeline(transport, policies=[policy]).run(HttpRequest("GET", "https://127.0.0.1:9/x"))
    return raised.value


def test_a_connection_that_cannot_be_made_is_given_up_in_a_few_quick_tries() -> None:
    # The default budget (10 retries, backoffs up to 60 s) is for a busy server; a dead or
    # mistyped endpoint answers nothing, and its budget is apart: 2 retries, waits <= 1 s.
    transport = _DeadEndpoint()
    policy = retry.BudgetedRetryPolicy(Clock(RetrySettings()), rng=_Longest())  # type: ignore[arg-type]
    error = _read_through(policy, transport)

    assert "Connection refused" in str(error)
    assert (transport.attempts, all(w <= 1.0 for w in transport.waits)) == (3, True), broken(
        "a-dead-endpoint-fails-fast",
        f"{transport.attempts} connection attempts, waits {transport.waits}",
    )


def test_a_busy_server_keeps_the_whole_budget() -> None:
    # The control: read errors (a reset, a read timeout) are not connect errors.
    from azure.core.exceptions import ServiceResponseError

    class _Resets(_DeadEndpoint):
        def send(self, request: Any, **kwargs: Any) -> Any:
            self.attempts += 1
            raise ServiceResponseError("read timed out")

    transport = _Resets()
    _read_through(retry.BudgetedRetryPolicy(Clock(QUICK)), transport)
    assert transport.attempts == QUICK.total + 1


def request_for_endpoint(**overrides: Any) -> Any:
    from cloudguard.cloud.records import SweepRequest

    return SweepRequest(endpoint="https://127.0.0.1:1", **overrides)


def test_a_429_past_azure_cores_default_of_3_retries_is_ridden_out(arm: FakeArm) -> None:
    arm.state.add_vm(SUB_A, "pilot", "vm-1")
    arm.faults.inject(429, times=6, match="/virtualMachines", retry_after=0.01)

    result = sweep(arm, replace(QUICK, total=6))

    assert result.failures == () and [r.name for r in result.resources] == ["vm-1"]
    assert arm.faults.requests["GET vm_list_all"] == 7  # one request, six retries


class _Sleeps:
    """A transport whose sleep only records how long it was asked to wait."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.asked.append(seconds)


def _answer(headers: dict[str, str]) -> Any:
    # What RetryPolicy.sleep reads of a PipelineResponse: its HTTP response's headers.
    return SimpleNamespace(http_response=SimpleNamespace(headers=headers))


def test_retry_after_is_honoured_as_given_and_backoff_has_full_jitter() -> None:
    settings = RetrySettings(backoff_factor=1.0, backoff_max=8.0)
    policy = retry.BudgetedRetryPolicy(Clock(settings))
    transport = _Sleeps()

    policy.sleep({"history": [object()]}, transport, _answer({"Retry-After": "7"}))
    assert transport.asked == [7.0]

    # Backoff: a uniform draw in [0, factor x 2^(n-1)], capped; not azure-core's fixed steps.
    draws = {n: [policy.get_backoff_time(_backoff(n)) for _ in range(300)] for n in (1, 3, 6)}
    assert all(0 <= d <= 1.0 for d in draws[1]) and all(0 <= d <= 4.0 for d in draws[3])
    assert all(0 <= d <= 8.0 for d in draws[6])
    assert min(draws[3]) < 1.0 < 3.0 < max(draws[3]), "backoff is not jittered over its range"
    assert len(set(draws[6])) > 250


def _backoff(failures: int) -> dict[str, Any]:
    return {"history": [object()] * failures, "backoff": 1.0, "max_backoff": 8.0}


def test_a_sustained_429_storm_finishes_with_the_baselines_findings(arm: FakeArm) -> None:
    arm.faults.page_size = 5
    arm.state.seed_fleet([SUB_A, SUB_B, SUB_C], 2, 12, tags={"task-id": "t1"})
    subscriptions = (SUB_A, SUB_B, SUB_C)
    baseline = sweep(arm, subscriptions=subscriptions)
    assert baseline.failures == () and len(baseline.resources) == 72

    arm.faults.reset_counts()
    arm.faults.storm(0.3, retry_after=(0.005, 0.02))
    stormed = sweep(arm, subscriptions=subscriptions)

    assert stormed.failures == ()
    assert found(stormed) == found(baseline)
    assert arm.faults.answered["429"] >= 5  # the storm really happened


def test_500s_and_503s_at_random_are_ridden_out(arm: FakeArm) -> None:
    arm.faults.page_size = 5
    arm.state.seed_fleet([SUB_A, SUB_B], 1, 60)
    baseline = sweep(arm, subscriptions=(SUB_A, SUB_B))

    arm.faults.reset_counts()
    arm.faults.storm(0.3, statuses=(500, 503), retry_after=None)
    flaky = sweep(arm, subscriptions=(SUB_A, SUB_B))

    assert flaky.failures == () and found(flaky) == found(baseline)
    assert arm.faults.answered["500"] >= 1 and arm.faults.answered["503"] >= 1


# -- no page thrown away ---------------------------------------------------------------------


def test_a_page_that_fails_twice_resumes_without_rereading_earlier_pages(arm: FakeArm) -> None:
    arm.faults.page_size = 5
    arm.state.seed_fleet([SUB_A], 1, 14)
    # One retry per request: page 3 fails its first attempt (two 500s) and is resumed.
    arm.faults.inject(500, times=2, match="$skiptoken=10")

    result = sweep(arm, replace(QUICK, total=1))

    assert result.failures == () and len(result.resources) == 14
    assert pages_read(arm, SUB_A) == ["", "5", "10", "10", "10"], broken(
        "a-failed-page-resumes", "earlier pages were re-read (or the failed page was not resumed)"
    )


def test_a_subscription_is_reported_whole_or_not_at_all(arm: FakeArm) -> None:
    arm.faults.page_size = 5
    arm.state.seed_fleet([SUB_A], 1, 12)
    arm.state.seed_fleet([SUB_B], 1, 4)  # one page: no $skiptoken
    arm.faults.inject(503, times=100, match="$skiptoken=5")  # SUB_A's second page, always

    result = sweep(arm, replace(QUICK, total=1), subscriptions=(SUB_A, SUB_B))

    (failure,) = result.failures
    assert failure.source == f"azure subscription {SUB_A}"
    assert "HTTP 503" in failure.reason
    assert "page 2 (attempt 2 of the subscription)" in failure.reason
    assert {r.account for r in result.resources} == {SUB_B}  # none of SUB_A's first page
    assert pages_read(arm, SUB_A) == ["", "5", "5", "5", "5"]  # page 1 was read, once


# -- the time budget ----------------------------------------------------------------------------


def test_a_subscription_past_its_time_budget_is_named_and_the_audit_did_not_run(
    arm: FakeArm,
) -> None:
    from datetime import UTC, datetime

    from cloudguard.audit.auditor import run_audit
    from cloudguard.audit.cost import bundled_prices
    from cloudguard.audit.evidence.interface import EvidenceRequest
    from cloudguard.documents.findings import AuditPolicy, exit_code

    arm.state.add_vm(SUB_A, "pilot", "vm-a")
    arm.state.add_vm(SUB_B, "pilot", "vm-b")
    # Retry-After 3 s against a budget of 1 s: it gives up at once, without waiting. (Were
    # the budget not kept, the two 429s would be waited out and the sweep would succeed.)
    arm.faults.inject(429, times=2, match=f"/subscriptions/{SUB_A}/", retry_after=3)

    result = sweep(arm, replace(QUICK, time_budget=1.0), subscriptions=(SUB_A, SUB_B))

    assert len(result.failures) == 1, broken(
        "the-time-budget-is-kept", "no subscription was named past its time budget"
    )
    (failure,) = result.failures
    assert failure.source == f"azure subscription {SUB_A}"
    assert "time budget of 1 s per subscription spent" in failure.reason
    assert "3.0 s for Retry-After" in failure.reason
    assert [r.name for r in result.resources] == ["vm-b"]
    # One request, and no second attempt of a subscription whose budget is spent.
    assert len(pages_read(arm, SUB_A)) == 1
    report = run_audit(
        [SimpleNamespace(read=lambda: result)],
        EvidenceRequest(),
        AuditPolicy(),
        bundled_prices(),
        datetime.now(UTC),
    )
    assert exit_code(report) == 75


# -- resets, named ----------------------------------------------------------------------------


def test_resets_are_named_as_resets_and_the_sdks_warnings_do_not_reach_stderr_bare(
    arm: FakeArm, caplog: pytest.LogCaptureFixture
) -> None:
    arm.faults.page_size = 5
    arm.state.seed_fleet([SUB_A], 1, 12)
    arm.faults.cut_pages(times=100, match="$skiptoken=5")
    caplog.set_level(logging.WARNING)

    result = sweep(arm, replace(QUICK, total=2))

    (failure,) = result.failures
    assert failure.reason.startswith("connection reset mid-response (page cut off: ")
    assert "not valid JSON" not in failure.reason
    assert arm.faults.answered["reset"] == 6  # 1 + 2 retries, per attempt, all backed off
    assert "Incomplete download." not in caplog.text

    # The control: without the fold, azure-core's bare warning is there to be seen.
    options = _options(arm, Clock(replace(QUICK, total=0)))  # (which folds them again)
    transport_log = logging.getLogger(retry._TRANSPORT_LOGGER)
    transport_log.removeFilter(retry._FOLD)
    try:
        with (
            ComputeManagementClient(arm.credential(), SUB_A, **options) as compute,
            pytest.raises(IncompleteReadError),
        ):
            _first_listing(compute).read(compute)  # its page 2 is still cut
    finally:
        transport_log.addFilter(retry._FOLD)
    assert "Incomplete download." in caplog.text


def test_resets_that_heal_cost_nothing(arm: FakeArm) -> None:
    arm.faults.page_size = 5
    arm.state.seed_fleet([SUB_A], 1, 12)
    arm.faults.cut_pages(times=2, match="$skiptoken=5")

    result = sweep(arm)

    assert result.failures == () and len(result.resources) == 12
    assert arm.faults.answered["reset"] == 2


# -- quota headers -------------------------------------------------------------------------------


def test_the_fake_sends_the_remaining_quota_headers(arm: FakeArm) -> None:
    arm.state.add_vm(SUB_A, "pilot", "vm-1")
    arm.faults.drain_quota(capacity=10, refill_per_second=0.001)
    with ComputeManagementClient(arm.credential(), SUB_A, **_options(arm)) as compute:
        first = compute.send_request(HttpRequest("GET", _first_listing(compute).url))
        second = compute.send_request(HttpRequest("GET", _first_listing(compute).url))
    assert first.headers["x-ms-ratelimit-remaining-subscription-reads"] == "9"
    assert second.headers["x-ms-ratelimit-remaining-resource"] == (
        "Microsoft.Compute/HighCostGet3Min;8"
    )
    assert retry.remaining_quota(second.headers) == 8


def test_the_sweep_slows_as_the_quota_drains_and_is_not_throttled(arm: FakeArm) -> None:
    arm.faults.page_size = 1
    arm.state.seed_fleet([SUB_A], 1, 12)
    # 14 calls left and (as good as) no refill: the listing's 12 pages fit, just.
    arm.faults.drain_quota(capacity=14, refill_per_second=0.001)
    clock = Clock(replace(QUICK, quota_low_water=6, quota_pause_max=0.02))
    with ComputeManagementClient(arm.credential(), SUB_A, **_options(arm, clock)) as compute:
        listing = _first_listing(compute, keep_vms=True)
        listing.read(compute)

    assert len(listing.resources) == 12 and arm.faults.answered["429"] == 0
    # Calls left after each page: 13, 12, ..., 2; fewer than 6 after pages 9, 10 and 11,
    # so pages 10, 11 and 12 waited first.
    assert clock.paced == 3, f"paced {clock.paced} requests, not the 3 under the low-water mark"
    assert clock.waited > 0


# -- the sweep's JSON reader ---------------------------------------------------------------------


def test_the_json_reader_gives_the_resource_the_sdk_model_reader_gives(arm: FakeArm) -> None:
    from cloudguard_azure.normalise import vm_resource

    arm.state.add_vm(SUB_A, "pilot", "vm-1", tags={"task-id": "t1"}, power_state="deallocated")
    with ComputeManagementClient(arm.credential(), SUB_A, **_options(arm)) as compute:
        model = compute.virtual_machines.get("pilot", "vm-1", expand="instanceView")
        listing = _first_listing(compute, keep_vms=True)
        listing.read(compute)

    assert listing.resources == [vm_resource(model, SUB_A)]
    assert listing.resources[0].power_state == "deallocated"
    assert listing.resources[0].created is not None and listing.resources[0].size


def _options(arm: FakeArm, clock: Clock | None = None) -> dict[str, Any]:
    request = request_for(arm)
    return client_options(request, clock or Clock(QUICK))


def _first_listing(compute: Any, *, keep_vms: bool = False) -> Listing:
    """The sweep's VM listing of SUB_A (`compute`: the client that will read it)."""
    from cloudguard_azure.adapter import _listings

    from cloudguard.cloud.records import SweepRequest

    request = SweepRequest(kinds=("vm",))
    return _listings(SUB_A, request, lambda resource: keep_vms, f"azure:{SUB_A}")[0]


# -- slow is never silent (issue 36, item 2) -------------------------------------------------


def test_a_sweep_tells_each_subscription_as_it_goes(arm: FakeArm) -> None:
    arm.state.add_vm(SUB_A, "pilot", "vm-1")
    arm.state.add_vm(SUB_B, "pilot", "vm-2")
    told: list[tuple[str, str]] = []
    sweep(
        arm, subscriptions=(SUB_A, SUB_B), progress=lambda scope, what: told.append((scope, what))
    )

    said = sorted((scope, what.split(" (")[0]) for scope, what in told)
    assert said == sorted(
        [
            (f"azure subscription {SUB_A}", "reading"),
            (f"azure subscription {SUB_A}", "1 resource"),
            (f"azure subscription {SUB_B}", "reading"),
            (f"azure subscription {SUB_B}", "1 resource"),
        ]
    ), broken("a-sweep-says-each-scope", repr(told))


@pytest.fixture
def dead_port() -> Iterator[int]:
    """A loopback port bound and held but never listening: every connection to it is
    refused, and no other process can take it meanwhile."""
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield int(held.getsockname()[1])


def test_a_dead_endpoint_is_75_in_seconds_naming_it(dead_port: int) -> None:
    import subprocess
    import sys
    import time

    port = dead_port
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "cloudguard", "audit", "--provider", "azure",
         "--credential", "fake-arm", "--management-endpoint", f"https://127.0.0.1:{port}",
         "--subscription", SUB_A, "--format", "json"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    took = time.monotonic() - started

    assert done.returncode == 75, done.stderr
    assert f"could not connect to 127.0.0.1:{port}: [Errno 111] Connection refused" in done.stderr
    # Measured: 8.7 s on a loaded 2-core machine (3 tries per read, twice per subscription,
    # waits <= 1 s); the whole retry budget took 4 min 42 s. The bound leaves room for load.
    assert took < 60, broken("a-dead-endpoint-fails-fast", f"{took:.1f} s\n{done.stderr}")
    assert done.stdout.strip().startswith("{")  # stdout is the report alone

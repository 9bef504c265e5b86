"""The AWS sweep rides out EC2 throttling: botocore's adaptive retry mode with the sweep's
retry budget, against moto behind a proxy that answers RequestLimitExceeded."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from aws_helpers import session
from botocore.retries.bucket import TokenBucket
from botocore.retries.standard import ExponentialBackoff
from cloudguard_aws.adapter import AwsAdapter, make_client, retry_config
from test_aws_adapter import launch
from throttling_proxy import Throttling, throttling_proxy

from cloudguard.cloud.records import SweepRequest


@pytest.fixture(autouse=True)
def test_sized_backoff(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # botocore's throttling backoff starts at 1 s (full jitter), and after a throttle the
    # adaptive limiter may send as slowly as one request per 2 s: milliseconds here.
    scales = {"throttling_base_scale": 0.01, "non_throttling_base_scale": 0.005}
    monkeypatch.setattr(ExponentialBackoff, "_DEFAULT_BACKOFF_CONFIG", scales)
    monkeypatch.setattr(TokenBucket.__init__, "__defaults__", (50.0,))  # min_rate
    yield


def sweep(endpoint: str, retries: int = 10) -> object:
    request = SweepRequest(
        endpoint=endpoint,
        credential="fake",
        regions=("us-east-1",),
        retries=retries,
        kinds=("vm",),
    )
    return AwsAdapter(session_factory=session).sweep(request)


def test_the_retry_budget_reaches_botocore_in_adaptive_mode(endpoint: str) -> None:
    request = SweepRequest(endpoint=endpoint, credential="fake", regions=("us-east-1",), retries=7)
    assert retry_config(request) == {"mode": "adaptive", "total_max_attempts": 8}
    client = make_client(session(request), request, "ec2", "us-east-1")
    assert client.meta.config.retries == {"mode": "adaptive", "total_max_attempts": 8}


def test_request_limit_exceeded_past_botocores_default_is_ridden_out(endpoint: str) -> None:
    launch(endpoint, "us-east-1", {"task-id": "t"}, count=3)
    # botocore's default budget is 3 attempts; these 4 throttles would end it.
    throttling = Throttling("DescribeInstances", first=4)
    with throttling_proxy(endpoint, throttling) as proxy:
        result = sweep(proxy)

    assert result.failures == () and len(result.resources) == 3
    assert throttling.counts["throttled"] == 4


def test_a_throttling_storm_finishes_with_the_baselines_findings(endpoint: str) -> None:
    launch(endpoint, "us-east-1", {"task-id": "t"}, count=12)
    baseline = sweep(endpoint)
    throttling = Throttling("DescribeInstances", share=0.3, seed=3)
    with throttling_proxy(endpoint, throttling) as proxy:
        for _ in range(2):
            stormed = sweep(proxy)
            assert stormed.failures == ()
            assert {r.id for r in stormed.resources} == {r.id for r in baseline.resources}
    assert throttling.counts["throttled"] >= 1  # the storm really happened


def test_a_budget_too_small_for_the_throttling_names_the_region(endpoint: str) -> None:
    launch(endpoint, "us-east-1", {"task-id": "t"})
    throttling = Throttling("DescribeInstances", first=100)
    with throttling_proxy(endpoint, throttling) as proxy:
        result = sweep(proxy, retries=2)

    (failure,) = result.failures
    assert failure.source == "aws region us-east-1"
    assert "RequestLimitExceeded" in failure.reason
    assert throttling.counts["throttled"] == 3  # 1 + 2 retries


# -- a connection that cannot be made (issue 36, item 2) -------------------------------------


@pytest.fixture
def dead_port() -> Iterator[int]:
    """A loopback port bound and held but never listening: every connection to it is
    refused, and no other process can take it meanwhile."""
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield int(held.getsockname()[1])


def test_a_dead_endpoint_is_given_up_in_a_few_quick_tries(dead_port: int) -> None:
    from botocore.exceptions import EndpointConnectionError
    from named_checks import broken

    request = SweepRequest(
        endpoint=f"http://127.0.0.1:{dead_port}", credential="fake", regions=("us-east-1",)
    )
    client = make_client(session(request), request, "ec2", "us-east-1")
    attempts: list[str] = []
    client.meta.events.register("before-send", lambda **_: attempts.append("sent"))

    with pytest.raises(EndpointConnectionError):
        client.describe_instances()
    # The default budget (--retries 10: 11 attempts, backoffs up to 20 s) is for a busy
    # server; nothing answered here: 3 attempts, waits of at most 1 s.
    assert len(attempts) == 3, broken("a-dead-endpoint-fails-fast", f"{len(attempts)} attempts")


def test_a_throttled_read_keeps_the_whole_budget_beside_the_connect_one(endpoint: str) -> None:
    # The control: botocore's own handler still decides everything but a failed connect.
    launch(endpoint, "us-east-1", {"task-id": "t"}, count=1)
    throttling = Throttling("DescribeInstances", first=5)
    with throttling_proxy(endpoint, throttling) as proxy:
        result = sweep(proxy)
    assert result.failures == () and throttling.counts["throttled"] == 5

"""One AWS session: what the sweep, the organization sweep and the reaper all need.

The boto3 session (`--credential PROFILE`, or boto3's own chain), the check
that it has credentials at all (one failure naming the chain tried), the
client options (`--management-endpoint`, `--ca-bundle`, the retry budget),
the enabled regions (the default scope) and the one-line description of a
botocore error. The sweep (cloudguard_aws.adapter, organizations) and the
reaper import this module; it imports neither. boto3 is imported inside the
functions.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from functools import cache
from typing import Any

from cloudguard.cloud.records import SweepRequest

CREDENTIAL_CHAIN = (
    "environment variables, shared credentials/config files (profiles, SSO, "
    "credential_process), web identity, container credentials, instance metadata (IMDS)"
)


def missing_credentials(session: Any) -> str | None:
    """Why `session` cannot be used (no credentials anywhere in the chain); None if it can."""
    if session.get_credentials() is None:
        return f"no AWS credentials found; tried: {CREDENTIAL_CHAIN}"
    return None


def default_session(request: SweepRequest) -> Any:
    import boto3

    return boto3.Session(profile_name=request.credential) if request.credential else boto3.Session()


# boto3 sessions are not thread-safe, clients are: the sweeps make clients from one session
# in several threads, so making a client is serialised and using it is not.
_CLIENT_CREATION = threading.Lock()


def make_client(session: Any, request: SweepRequest, service: str, region: str) -> Any:
    from botocore.config import Config

    with _CLIENT_CREATION:
        return session.client(
            service,
            region_name=region,
            endpoint_url=request.endpoint,
            verify=request.ca_bundle,
            config=Config(retries=retry_config(request)),
        )


def retry_config(request: SweepRequest) -> dict[str, Any]:
    """botocore's adaptive retry mode with the sweep's retry budget (`--retries`).

    Adaptive is standard mode (backoff with full jitter on RequestLimitExceeded,
    throttling codes and 5xx, x-amz-retry-after honoured) plus a client-side
    rate limiter that slows the client's sending rate after a throttle, so a
    region that throttles is read more slowly instead of harder.
    `total_max_attempts` counts the first request, hence the +1.
    """
    return {"mode": "adaptive", "total_max_attempts": request.retries + 1}


def enabled_regions(session: Any, request: SweepRequest, seed: str) -> list[str]:
    answer = make_client(session, request, "ec2", seed).describe_regions(AllRegions=False)
    return sorted(r["RegionName"] for r in answer["Regions"])


def describe_error(error: Exception) -> str:
    response = getattr(error, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code", "")
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode", "")
        return f"{code} (HTTP {status}): {error}"
    return str(error)


class ItemBudget:
    """`reap apply --item-budget`: a deadline for one item's reads, retries included.

    botocore's retries have no deadline of their own (10 retries of a failing read can
    take minutes), so every read client of the reaper checks it before each attempt
    (`before-send`): past it, the read stops with `ItemBudgetSpent`, the item is
    unreadable (named) and the run exits 75. A backoff already begun may end up to
    botocore's cap (20 s) past it.
    """

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._deadline: float | None = None

    def start(self) -> None:
        if self.seconds is not None:
            self._deadline = time.monotonic() + self.seconds

    def bind(self, client: Any) -> Any:
        client.meta.events.register("before-send", self._check)
        return client

    def _check(self, **_: Any) -> None:
        if self._deadline is not None and time.monotonic() > self._deadline:
            raise _spent(self.seconds or 0.0)


def _spent(seconds: float) -> Exception:
    return _budget_error()(seconds=seconds)


@cache
def _budget_error() -> Callable[..., Exception]:
    """A BotoCoreError (botocore is imported only when a reaper runs): what every read's
    handler already names as an AWS failure."""
    from botocore.exceptions import BotoCoreError

    class ItemBudgetSpent(BotoCoreError):
        fmt = "gave up: time budget of {seconds:g} s per item spent (--item-budget)"

    return ItemBudgetSpent

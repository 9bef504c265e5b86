"""How an Azure sweep waits: the retry budget, backoff with full jitter, quota pacing.

One setting, the retry budget (`--retries N`, `[audit] retries`), reaches
azure-core as every one of its counters: `retry_total`, `retry_status`,
`retry_read` (and `retry_connect`, capped: below). azure-core stops at the SMALLEST of them
(`RetryPolicyBase.is_exhausted` takes the min of the non-zero counters), and
`retry_status`/`retry_read`/`retry_connect` default to 3, so setting only
`retry_total` never raised the budget past 3 retries.

On top of azure-core's RetryPolicy:

- exponential backoff with FULL jitter (a uniform draw in [0, factor x 2^n],
  capped): a storm's clients do not come back in lockstep. azure-core's own
  backoff has no jitter and skips the first wait.
- Retry-After is always honoured, as given.
- a connection that cannot be made (azure-core's ServiceRequestError:
  refused, unresolvable, a connect timeout) is budgeted apart: at most
  `connect_retries` (2) retries with waits of at most `connect_backoff_max`
  (1 s), so a dead or mistyped endpoint fails in seconds, not after the
  whole budget; a busy server (429, 5xx, resets, read timeouts) keeps it.
- a connection reset mid-response (azure-core raises IncompleteReadError, a
  DecodeError) counts as a READ retry and backs off; azure-core counts it
  against the status budget with no wait at all.
- a time budget per subscription: before any wait, a sweep whose wait would
  end past its deadline stops and says so (`TimeBudgetExhausted`, which is
  not an AzureError, so the RetryPolicy does not retry it).
- quota pacing: the `x-ms-ratelimit-remaining-*` headers ARM and Compute
  send on every answer are read; when one runs low, the next request waits
  a little, so the sweep slows before it is throttled.
"""

from __future__ import annotations

import logging
import random
import time
from typing import Any

from azure.core.exceptions import IncompleteReadError, ServiceRequestError, ServiceResponseError
from azure.core.pipeline import PipelineRequest, PipelineResponse
from azure.core.pipeline.policies import HTTPPolicy, RetryPolicy

from cloudguard_azure.budget import QUOTA_HEADERS, Clock


class BudgetedRetryPolicy(RetryPolicy):
    """azure-core's RetryPolicy with full jitter, resets as read errors, and a deadline."""

    def __init__(self, clock: Clock, rng: random.Random | None = None) -> None:
        budget = clock.budget
        super().__init__(
            retry_total=budget.total,
            retry_status=budget.total,
            retry_read=budget.total,
            retry_connect=min(budget.total, budget.connect_retries),
            retry_backoff_factor=budget.backoff_factor,
            retry_backoff_max=budget.backoff_max,
        )
        self.clock = clock
        self._rng = rng or random.Random()

    def _is_read_error(self, err: Exception) -> bool:
        # A reset mid-body is a read that failed, not an answer with a status.
        return isinstance(err, ServiceResponseError | IncompleteReadError)

    def increment(self, settings: Any, response: Any = None, error: Any = None) -> bool:
        status = getattr(getattr(response, "http_response", None), "status_code", None)
        self.clock.count(
            retried=1,
            resets=int(isinstance(error, IncompleteReadError)),
            throttled=int(status == 429),
        )
        return super().increment(settings, response=response, error=error)

    def get_backoff_time(self, settings: Any) -> float:
        failures = max(1, len(settings["history"]))
        ceiling = min(settings["max_backoff"], settings["backoff"] * 2 ** (failures - 1))
        if _last_failed_to_connect(settings):  # nothing answered: short waits, few tries
            ceiling = min(ceiling, self.clock.budget.connect_backoff_max)
        return self._rng.uniform(0, ceiling)

    def sleep(self, settings: Any, transport: Any, response: Any = None) -> None:
        retry_after = self.get_retry_after(response) if response is not None else None
        if retry_after:
            self.clock.wait(retry_after, transport.sleep, "Retry-After")
            return
        self.clock.wait(self.get_backoff_time(settings), transport.sleep, "backoff")


def _last_failed_to_connect(settings: Any) -> bool:
    history = settings.get("history") or []
    return bool(history) and isinstance(getattr(history[-1], "error", None), ServiceRequestError)


class QuotaPacing(HTTPPolicy):
    """Reads the remaining-quota headers of each answer; below the low-water mark, the
    next request first waits in proportion to how little is left (0 left: the longest)."""

    def __init__(self, clock: Clock) -> None:
        super().__init__()
        self.clock = clock
        self._remaining: int | None = None

    def send(self, request: PipelineRequest[Any]) -> PipelineResponse[Any, Any]:
        budget = self.clock.budget
        remaining = self._remaining
        if remaining is not None and remaining < budget.quota_low_water:
            share = (budget.quota_low_water - max(remaining, 0)) / budget.quota_low_water
            self.clock.count(paced=1)
            self.clock.wait(share * budget.quota_pause_max, time.sleep, "quota pacing")
        response = self.next.send(request)
        self._remaining = remaining_quota(response.http_response.headers)
        return response


def remaining_quota(headers: Any) -> int | None:
    """The fewest calls left across the quota headers; None when none is sent."""
    counts: list[int] = []
    for name in QUOTA_HEADERS:
        value = headers.get(name)
        if not value:
            continue
        for bucket in str(value).split(","):
            count = bucket.rpartition(";")[2].strip()
            if count.lstrip("-").isdigit():
                counts.append(int(count))
    return min(counts) if counts else None


class _SdkDownloadWarnings(logging.Filter):
    """azure-core logs a bare "Incomplete download." at WARNING for every reset; the
    sweep names resets in its own messages, so these do not reach stderr bare."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() not in ("Incomplete download.", "Unable to stream download.")


_TRANSPORT_LOGGER = "azure.core.pipeline.transport._requests_basic"
_FOLD = _SdkDownloadWarnings()


def fold_sdk_warnings() -> None:
    """Idempotent: the filter is one object, and Logger.addFilter ignores a repeat."""
    logging.getLogger(_TRANSPORT_LOGGER).addFilter(_FOLD)

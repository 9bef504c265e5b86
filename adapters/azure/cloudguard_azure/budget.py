"""What a sweep may spend on waiting: the retry budget and one subscription's clock.

Stdlib only, so the adapter can name its settings without importing the SDK.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

# ARM's subscription-wide read counter, and the resource provider's own buckets
# ("Microsoft.Compute/HighCostGet3Min;159", one header value per bucket, so
# several arrive comma-joined). Both are "calls left before a 429".
QUOTA_HEADERS = (
    "x-ms-ratelimit-remaining-subscription-reads",
    "x-ms-ratelimit-remaining-resource",
)


@dataclass(frozen=True)
class RetrySettings:
    """What one sweep may spend on waiting; `total` is the one user-facing setting (`--retries`)."""

    total: int = 10  # retries per request: throttling, 5xx, resets, timeouts
    # After n failures, a backoff is drawn from [0, backoff_factor x 2^(n-1)] seconds.
    backoff_factor: float = 0.8
    backoff_max: float = 60.0  # cap of one backoff (a Retry-After is honoured as given)
    time_budget: float = 1800.0  # seconds per subscription, first request to last page
    quota_low_water: int = 20  # pace when a remaining-quota header falls below this
    quota_pause_max: float = 1.0  # the longest pause before one request, at 0 left
    # A connection that cannot be made (refused, no route, connect timeout) is no busy
    # server: budgeted apart from `total`, a few quick tries, then the endpoint is named.
    connect_retries: int = 2
    connect_backoff_max: float = 1.0


class TimeBudgetExhausted(Exception):
    """A subscription's time budget would run out before its next request could be made."""


@dataclass
class Clock:
    """One unit of work's deadline (a subscription's sweep, one reaped item's reads), and
    what its waits were spent on (for messages)."""

    budget: RetrySettings
    unit: str = "subscription"  # what the time budget is per, for messages
    started: float = field(default_factory=time.monotonic)
    waited: float = 0.0
    retried: int = 0
    resets: int = 0
    throttled: int = 0
    paced: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def wait(self, seconds: float, sleep: Any, why: str) -> None:
        """Sleep `seconds` unless that would end past the deadline: then give up, named."""
        if seconds <= 0:
            return
        elapsed = time.monotonic() - self.started
        if elapsed + seconds > self.budget.time_budget:
            raise TimeBudgetExhausted(
                f"time budget of {self.budget.time_budget:g} s per {self.unit} spent "
                f"({elapsed:.1f} s elapsed; the next wait, {seconds:.1f} s for {why}, would "
                f"pass it; {self.summary()})"
            )
        with self._lock:
            self.waited += seconds
        sleep(seconds)

    def restart(self) -> None:
        """The next unit of work begins (the reaper's next item): a fresh deadline."""
        with self._lock:
            self.started = time.monotonic()
            self.waited = 0.0
            self.retried = self.resets = self.throttled = self.paced = 0

    def count(
        self, *, retried: int = 0, resets: int = 0, throttled: int = 0, paced: int = 0
    ) -> None:
        with self._lock:
            self.retried += retried
            self.resets += resets
            self.throttled += throttled
            self.paced += paced

    def summary(self) -> str:
        return (
            f"{self.retried} failed attempts ({self.throttled} throttled, {self.resets} "
            f"connection resets), {self.paced} paced requests, {self.waited:.1f} s waited"
        )

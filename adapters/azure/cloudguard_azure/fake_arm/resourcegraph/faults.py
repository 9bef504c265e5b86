"""Resource Graph's per-user quota in the fake, and what it does wrong on purpose.

Real Resource Graph allows a number of queries per user per window (about 15
per 5 seconds) and says so on every response: `x-ms-user-quota-remaining`
and `x-ms-user-quota-resets-after` (hh:mm:ss). A query sent while the quota
is spent is answered 429 with the same headers. The fake keeps that window;
`early` counts the queries that arrived while the quota was spent, i.e. a
client that did not wait for the reset it was told about.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field


@dataclass(frozen=True)
class QuotaAnswer:
    admitted: bool
    remaining: int
    resets_after: float  # seconds

    def headers(self) -> dict[str, str]:
        seconds = math.ceil(max(0.0, self.resets_after))  # never announce a reset too early
        hours, rest = divmod(seconds, 3600)
        return {
            "x-ms-user-quota-remaining": str(self.remaining),
            "x-ms-user-quota-resets-after": f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}",
        }


@dataclass
class GraphFaults:
    limit: int = 1000  # queries per window; generous by default, tests lower it
    window: float = 5.0  # seconds
    page_size: int | None = None  # rows per page when fewer than the client's $top
    throttle_next: int = 0  # this many queries are answered 429 with the quota drained
    throttle_for: float = 1.0  # seconds the drained quota stays spent
    truncate_next: int = 0  # this many pages say resultTruncated with no $skipToken
    queries: int = 0  # queries answered (any status)
    early: int = 0  # queries that arrived while the announced quota was spent
    throttled: int = 0  # 429s injected by throttle_next
    _used: int = 0
    _window_end: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def quota(self, limit: int, window: float) -> None:
        """`limit` queries per `window` seconds from now on."""
        with self._lock:
            self.limit, self.window = limit, window
            self._used, self._window_end = 0, 0.0

    def throttle(self, times: int = 1, *, resets_after: float = 1.0) -> None:
        """The next `times` queries are refused 429 with the quota drained for `resets_after`."""
        with self._lock:
            self.throttle_next, self.throttle_for = times, resets_after

    def admit(self) -> QuotaAnswer:
        with self._lock:
            now = time.monotonic()
            self.queries += 1
            if now >= self._window_end:
                self._used, self._window_end = 0, now + self.window
            if self._used >= self.limit:
                self.early += 1
                return QuotaAnswer(False, 0, self._window_end - now)
            if self.throttle_next > 0:
                self.throttle_next -= 1
                self.throttled += 1
                self._used, self._window_end = self.limit, now + self.throttle_for
                return QuotaAnswer(False, 0, self.throttle_for)
            self._used += 1
            return QuotaAnswer(True, self.limit - self._used, self._window_end - now)

    def take_truncation(self) -> bool:
        with self._lock:
            if self.truncate_next > 0:
                self.truncate_next -= 1
                return True
            return False

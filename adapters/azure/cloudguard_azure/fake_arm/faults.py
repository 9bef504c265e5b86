"""What the fake does wrong on purpose, and what it counts.

Tests and benchmarks steer the fake only through this object: latency per
request, N answers of 429/500 for matching paths, a subscription that
answers 403, long-running operations that end Failed, a page that is not
JSON, the page size. The counters are how a benchmark states the number of
HTTP requests a sweep cost.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class StatusRule:
    status: int  # 429, 500, 503 ...
    times: int  # how many matching requests still get this answer
    match: str = ""  # a substring of the path (case-insensitive); "" matches every request
    retry_after: int | None = None  # seconds, sent as Retry-After


@dataclass
class OperationFailure:
    times: int  # how many matching long-running operations still fail
    match: str  # a substring of the path that started the operation ("" matches all)
    code: str  # ARM error code of the Failed operation
    message: str


@dataclass
class Faults:
    latency: float = 0.0  # seconds slept before answering each request
    page_size: int = 50  # items per page of every list; ARM's size is undocumented (50, 200 seen)
    rules: list[StatusRule] = field(default_factory=list)
    forbidden: set[str] = field(default_factory=set)  # casefolded subscription ids answering 403
    malformed: set[tuple[str, int]] = field(default_factory=set)  # (subscription, page index)
    failing_operations: list[OperationFailure] = field(default_factory=list)
    requests: Counter[str] = field(default_factory=Counter)  # "GET vm_list_all" -> count
    in_flight: int = 0
    peak_in_flight: int = 0  # the most requests being answered at once: proves a concurrency bound
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # -- steering ----------------------------------------------------------------

    def inject(
        self, status: int, *, times: int = 1, match: str = "", retry_after: int | None = None
    ) -> None:
        with self._lock:
            self.rules.append(StatusRule(status, times, match.casefold(), retry_after))

    def forbid(self, subscription_id: str) -> None:
        self.forbidden.add(subscription_id.casefold())

    def fail_operations(
        self,
        *,
        match: str = "",
        times: int = 1,
        code: str = "OperationPreempted",
        message: str = "The operation was preempted by a more recent operation.",
    ) -> None:
        """The next `times` LROs started by a path containing `match` are accepted (202),
        then end with status Failed and this ARM error."""
        with self._lock:
            self.failing_operations.append(OperationFailure(times, match.casefold(), code, message))

    def malform_page(self, subscription_id: str, page: int = 0) -> None:
        """Page `page` (0-based) of every listing in the subscription is cut short mid-JSON."""
        self.malformed.add((subscription_id.casefold(), page))

    # -- consulted by the server ---------------------------------------------------

    def take_rule(self, path: str) -> StatusRule | None:
        with self._lock:
            folded = path.casefold()
            for rule in self.rules:
                if rule.times > 0 and rule.match in folded:
                    rule.times -= 1
                    return rule
        return None

    def take_operation_failure(self, path: str) -> tuple[str, str] | None:
        with self._lock:
            folded = path.casefold()
            for rule in self.failing_operations:
                if rule.times > 0 and rule.match in folded:
                    rule.times -= 1
                    return rule.code, rule.message
        return None

    def count(self, route: str) -> None:
        with self._lock:
            self.requests[route] += 1

    def enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    @property
    def total_requests(self) -> int:
        with self._lock:
            return sum(self.requests.values())

    def reset_counts(self) -> None:
        with self._lock:
            self.requests.clear()
            self.peak_in_flight = self.in_flight

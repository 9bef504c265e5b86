"""What the fake does wrong on purpose, and what it counts.

Tests and benchmarks steer the fake only through this object: latency per
request, N answers of 429/500 for matching paths, a subscription that
answers 403, long-running operations that end Failed, a page that is not
JSON, the page size; and, drawn from a seeded random generator, a share of
429s (with Retry-After) or 500/503s, pages cut off mid-body by a connection
reset, slow pages, and a read quota that drains (sent in the
`x-ms-ratelimit-remaining-*` headers, 429 once it is empty); and a hook
called before each request is answered (`before_answer`), so a test can
change the world between any two requests, as a concurrent creator would
(a fresh resource that reads 404 for a while is state: `ArmState.settle_after`).
The counters
and the request log are how a benchmark states the number of HTTP requests
a sweep cost, and how a test shows which pages were read twice.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from cloudguard_azure.fake_arm.resourcegraph.faults import GraphFaults

# What the fake tells a client about its quota when no draining quota is set:
# ARM's hourly subscription read allowance, barely touched.
UNTOUCHED_READS = 11999


@dataclass
class StatusRule:
    status: int  # 429, 500, 503 ...
    times: int  # how many matching requests still get this answer
    match: str = ""  # a substring of the path (case-insensitive); "" matches every request
    retry_after: float | None = None  # seconds: Retry-After if whole, else retry-after-ms
    method: str = ""  # only requests of this method ("DELETE": not the GET of the same path)


@dataclass
class RandomRule:
    share: float  # the chance that a matching request gets one of `statuses`
    statuses: tuple[int, ...]
    match: str = ""
    retry_after: tuple[float, float] | None = None  # drawn from [low, high] seconds


@dataclass
class CutRule:
    """Answer with the full Content-Length, send half the body, close the connection."""

    times: int = 0  # the next N matching answers
    share: float = 0.0  # and/or this share of them, at random
    match: str = ""


@dataclass
class SlowRule:
    share: float
    delay: float  # seconds
    match: str = ""


@dataclass
class Quota:
    """A read bucket per subscription, as ARM and Compute keep them: each request takes
    one; it refills continuously; empty means 429 with the wait until the next one."""

    capacity: int
    refill_per_second: float
    bucket: str = "Microsoft.Compute/HighCostGet3Min"  # the name Compute's docs show
    left: dict[str, float] = field(default_factory=dict)
    updated: dict[str, float] = field(default_factory=dict)

    def take(self, scope: str) -> tuple[int, float | None]:
        """(calls left after this one, None) or (0, seconds until one is free)."""
        now = time.monotonic()
        left = self.left.get(scope, float(self.capacity))
        left = min(
            self.capacity, left + (now - self.updated.get(scope, now)) * self.refill_per_second
        )
        self.updated[scope] = now
        if left < 1:
            self.left[scope] = left
            return 0, (1 - left) / self.refill_per_second
        self.left[scope] = left - 1
        return int(left - 1), None


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
    random_rules: list[RandomRule] = field(default_factory=list)
    cuts: list[CutRule] = field(default_factory=list)
    slow: list[SlowRule] = field(default_factory=list)
    quota: Quota | None = None
    seed: int = 0  # of the generator every random fault is drawn from
    requests: Counter[str] = field(default_factory=Counter)  # "GET vm_list_all" -> count
    answered: Counter[str] = field(default_factory=Counter)  # "429", "200", "reset" -> count
    log: list[str] = field(default_factory=list)  # "GET /subscriptions/...?...$skiptoken=50"
    # When each request of `log` arrived (time.monotonic(), the server's clock): a test proves
    # a wait by the gaps between arrivals, not by its own wall clock.
    arrivals: list[float] = field(default_factory=list)
    in_flight: int = 0
    peak_in_flight: int = 0  # the most requests being answered at once: proves a concurrency bound
    graph: GraphFaults = field(default_factory=GraphFaults)  # Resource Graph's quota and faults
    # Called as each request arrives, before it is answered, with its 1-based index in `log`,
    # its method and its path with query: a test changes the world between any two requests
    # (adds a resource to a group just before request N), as a concurrent creator would.
    before_answer: Callable[[int, str, str], None] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _random: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    # -- steering ----------------------------------------------------------------

    def inject(
        self,
        status: int,
        *,
        times: int = 1,
        match: str = "",
        retry_after: float | None = None,
        method: str = "",
    ) -> None:
        with self._lock:
            rule = StatusRule(status, times, match.casefold(), retry_after, method.upper())
            self.rules.append(rule)

    def storm(
        self,
        share: float,
        *,
        statuses: tuple[int, ...] = (429,),
        retry_after: tuple[float, float] | None = (1, 2),
        match: str = "",
    ) -> None:
        """A `share` of matching requests, at random, answered with one of `statuses`
        (a 429 storm with Retry-After, or 500/503s with `retry_after=None`)."""
        with self._lock:
            self.random_rules.append(RandomRule(share, statuses, match.casefold(), retry_after))

    def cut_pages(self, *, times: int = 0, share: float = 0.0, match: str = "") -> None:
        """Matching 200 answers are cut off mid-body by a connection reset: the next `times`
        of them, and/or a random `share`."""
        with self._lock:
            self.cuts.append(CutRule(times, share, match.casefold()))

    def slow_pages(self, share: float, delay: float, *, match: str = "") -> None:
        with self._lock:
            self.slow.append(SlowRule(share, delay, match.casefold()))

    def drain_quota(self, capacity: int, refill_per_second: float) -> None:
        """Send a draining read quota per subscription, and 429 when it is empty."""
        with self._lock:
            self.quota = Quota(capacity, refill_per_second)

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

    def take_rule(self, path: str, method: str = "") -> StatusRule | None:
        """`path` with its query, so a rule can name one page (`$skiptoken=50`)."""
        with self._lock:
            folded = path.casefold()
            for rule in self.rules:
                if rule.times > 0 and rule.match in folded and rule.method in ("", method):
                    rule.times -= 1
                    return rule
            for chance in self.random_rules:
                if chance.match in folded and self._random.random() < chance.share:
                    after = chance.retry_after
                    return StatusRule(
                        self._random.choice(chance.statuses),
                        0,
                        chance.match,
                        None if after is None else _draw(self._random, after),
                    )
        return None

    def take_cut(self, path: str) -> bool:
        with self._lock:
            folded = path.casefold()
            for cut in self.cuts:
                if cut.match not in folded:
                    continue
                if cut.times > 0:
                    cut.times -= 1
                    return True
                if cut.share and self._random.random() < cut.share:
                    return True
        return False

    def delay_for(self, path: str) -> float:
        with self._lock:
            folded = path.casefold()
            return sum(
                s.delay for s in self.slow if s.match in folded and self._random.random() < s.share
            )

    def take_quota(self, scope: str) -> tuple[dict[str, str], float | None]:
        """The quota headers for one request in `scope` (a subscription, or "" for the
        tenant), and the Retry-After when the bucket is empty."""
        with self._lock:
            if self.quota is None:
                left, wait = UNTOUCHED_READS, None
                bucket = "Microsoft.Compute/HighCostGet3Min"
            else:
                (left, wait), bucket = self.quota.take(scope), self.quota.bucket
        headers = {
            "x-ms-ratelimit-remaining-subscription-reads": str(left),
            "x-ms-ratelimit-remaining-resource": f"{bucket};{left}",
        }
        return headers, wait

    def record(self, method: str, target: str) -> None:
        with self._lock:
            self.log.append(f"{method} {target}")
            self.arrivals.append(time.monotonic())
            index, hook = len(self.log), self.before_answer
        if hook is not None:  # outside the lock: the hook may seed state, or read the log
            hook(index, method, target)

    def answer(self, outcome: str) -> None:
        with self._lock:
            self.answered[outcome] += 1

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
            self.answered.clear()
            self.log.clear()
            self.arrivals.clear()
            self.peak_in_flight = self.in_flight


def _draw(rng: random.Random, bounds: tuple[float, float]) -> float:
    """Whole seconds stay whole (ARM's Retry-After); sub-second bounds give milliseconds."""
    low, high = bounds
    if float(low).is_integer() and float(high).is_integer():
        return float(rng.randint(int(low), int(high)))
    return round(rng.uniform(low, high), 3)

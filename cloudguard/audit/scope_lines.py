"""What a live sweep shows on stderr as it goes: slow is never silent (issue 36, item 2).

Each scope a sweep reads (an Azure subscription, an AWS region: the adapter
tells them through `SweepRequest.progress`, cloudguard.cloud.progress) is

- on a terminal: one line as it begins and one as it ends, above the
  progress bar (a person is watching);
- otherwise (a CI log, a pipe): nothing while it is quick, so a nightly's
  log and the tests that read stderr stay as they were; a scope still
  being read after `SLOW_AFTER` seconds gets one line saying so, and one
  more when it ends.

stdout is never written: the report (json, markdown, ...) stays clean.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

from cloudguard.cloud.progress import READING
from cloudguard.escape import one_line

SLOW_AFTER = 10.0  # seconds before a scope's reading is said off a terminal

PREFIX = "cloudguard audit: "


class ScopeLines:
    """`SweepRequest.progress` for the audit's command line (see the module's docstring)."""

    def __init__(
        self,
        *,
        terminal: bool,
        write: Callable[[str], None] | None = None,
        slow_after: float = SLOW_AFTER,
    ) -> None:
        self.terminal = terminal
        self.slow_after = slow_after
        self._write = write or _to_stderr
        self._lock = threading.Lock()
        self._timers: dict[str, threading.Timer] = {}
        self._slow: set[str] = set()
        self._started: dict[str, float] = {}

    def __call__(self, scope: str, what: str) -> None:
        scope = one_line(scope, 200)  # a scope names a cloud's id: escaped, never raw
        if what == READING:
            self._begins(scope)
        else:
            self._ends(scope, one_line(what, 300))

    def _begins(self, scope: str) -> None:
        if self.terminal:
            self._write(f"{PREFIX}reading {scope}")
        timer = threading.Timer(self.slow_after, self._still_reading, (scope,))
        timer.daemon = True
        with self._lock:
            self._started[scope] = time.monotonic()
            self._timers[scope] = timer
        timer.start()

    def _still_reading(self, scope: str) -> None:
        with self._lock:
            if scope not in self._timers:
                return  # ended meanwhile
            self._slow.add(scope)
            elapsed = time.monotonic() - self._started.get(scope, time.monotonic())
        self._write(f"{PREFIX}still reading {scope} ({elapsed:.0f} s so far)")

    def _ends(self, scope: str, what: str) -> None:
        with self._lock:
            timer = self._timers.pop(scope, None)
            slow = scope in self._slow
            self._slow.discard(scope)
        if timer is not None:
            timer.cancel()
        if self.terminal or slow:
            self._write(f"{PREFIX}{scope}: {what}")

    def close(self) -> None:
        """The sweep is over (or abandoned): no timer outlives it."""
        with self._lock:
            timers = list(self._timers.values())
            self._timers.clear()
        for timer in timers:
            timer.cancel()


def _to_stderr(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()

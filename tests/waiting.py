"""Waiting for a condition another process brings about: a bound on liveness, never a claim
about speed (a test proves order by a barrier or a server's log, not by how long it waited)."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(done: Callable[[], bool], *, within: float = 60) -> bool:
    """Poll `done` until it is true (True) or `within` seconds have passed (False)."""
    deadline = time.monotonic() + within
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True

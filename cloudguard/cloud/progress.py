"""What a live sweep says as it goes: each scope (a subscription, a region) as it begins and ends.

An adapter wraps the read of one scope in `told`; whoever asked for the sweep
(the audit's command line) set `SweepRequest.progress` and decides what to
show of it (cloudguard.audit.scope_lines). A request without one is untold,
and `told` costs nothing then. Stdlib only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from cloudguard.cloud.records import SourceFailure, SweepRequest

T = TypeVar("T")

READING = "reading"


def told(request: SweepRequest, scope: str, read: Callable[[], T]) -> T:
    """`read()` of one scope, told to the request's `progress` as it begins and ends."""
    say = request.progress
    if say is None:
        return read()
    say(scope, READING)
    started = time.monotonic()
    try:
        result = read()
    except BaseException:
        say(scope, f"not read ({time.monotonic() - started:.1f} s)")
        raise
    say(scope, f"{_what_was_read(result)} ({time.monotonic() - started:.1f} s)")
    return result


def _what_was_read(result: object) -> str:
    failed = getattr(result, "failures", None) or ()
    if isinstance(result, SourceFailure) or getattr(result, "failure", None):
        return "not read (named at the end)"
    resources = getattr(result, "resources", None)
    if resources is None:
        return "read"
    count = len(resources)
    read = f"{count} resource{'' if count == 1 else 's'}"
    return f"{read}, {len(failed)} source(s) not read (named at the end)" if failed else read

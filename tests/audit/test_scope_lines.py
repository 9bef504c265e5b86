"""Slow is never silent (issue 36, item 2): what a live sweep says on stderr as it goes.

On a terminal each scope (a subscription, a region) gets a line as it begins
and as it ends; off a terminal a quick scope says nothing (a CI log and the
report on stdout stay as they were), and one still being read after
`SLOW_AFTER` seconds says so, then how it ended.
"""

from __future__ import annotations

import threading
import time

from named_checks import broken

from cloudguard.audit.scope_lines import ScopeLines
from cloudguard.cloud.progress import told
from cloudguard.cloud.records import SourceFailure, SweepRequest, SweepResult

SCOPE = "azure subscription 1111"


def _lines(*, terminal: bool, slow_after: float = 10.0) -> tuple[ScopeLines, list[str]]:
    said: list[str] = []
    lock = threading.Lock()

    def write(line: str) -> None:
        with lock:
            said.append(line)

    return ScopeLines(terminal=terminal, write=write, slow_after=slow_after), said


def test_on_a_terminal_each_scope_is_said_as_it_begins_and_ends() -> None:
    lines, said = _lines(terminal=True)
    request = SweepRequest(progress=lines)
    told(request, SCOPE, lambda: SweepResult(resources=()))
    lines.close()

    assert [line.split(" (")[0] for line in said] == [
        "cloudguard audit: reading azure subscription 1111",
        "cloudguard audit: azure subscription 1111: 0 resources",
    ], broken("a-sweep-says-each-scope", "\n".join(said))


def test_off_a_terminal_a_quick_scope_says_nothing() -> None:
    lines, said = _lines(terminal=False, slow_after=5.0)
    told(SweepRequest(progress=lines), SCOPE, lambda: SweepResult(resources=()))
    lines.close()
    assert said == []  # the control of this absence: the slow scope below is said


def test_off_a_terminal_a_slow_scope_is_said_once_it_is_slow_and_when_it_ends() -> None:
    lines, said = _lines(terminal=False, slow_after=0.05)

    def slow() -> SourceFailure:
        time.sleep(0.4)
        return SourceFailure(SCOPE, "HTTP 503")

    told(SweepRequest(progress=lines), SCOPE, slow)
    lines.close()

    assert [line.split(" (")[0] for line in said] == [
        "cloudguard audit: still reading azure subscription 1111",
        "cloudguard audit: azure subscription 1111: not read",
    ], broken("a-slow-scope-is-said", "\n".join(said))


def test_an_untold_request_costs_nothing() -> None:
    assert told(SweepRequest(), SCOPE, lambda: 42) == 42


def test_a_scope_is_escaped_as_every_cloud_name_is() -> None:
    lines, said = _lines(terminal=True)
    told(SweepRequest(progress=lines), "aws region \x1b[31mred", lambda: SweepResult(()))
    lines.close()
    assert "\x1b" not in "".join(said)

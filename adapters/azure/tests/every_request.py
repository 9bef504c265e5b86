"""One apply per request it makes, each attacked just before that request (issue 32).

The reaper's promise under attack: whatever changes in the cloud before request n of an
apply, no action goes out after the change, except when the change arrives with the action
itself (the window ARM leaves). `attack_before_each_request` replays the same apply with
the change made before request 1, 2, ... and stops at the first cell that either reached
the window or sent an action after the change; the caller names its check on that cell.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from cloudguard_azure.fake_arm.faults import Faults

# Makes the change before request n, returns what undoes it (so the next cell replays the
# same world).
Change = Callable[[int], Callable[[], None]]
# Runs one apply: (exit code, output, the reap log's entries).
Apply = Callable[[], tuple[int, str, Any]]


@dataclass(frozen=True)
class Cell:
    n: int
    raced_at: str  # the request the change was made just before
    sent: list[str]  # the actions the apply sent
    code: int
    out: str
    log: Any
    in_window: bool  # the change arrived with an action: ARM offers no check after it

    @property
    def acted_after_change(self) -> bool:
        return bool(self.sent) and not self.in_window


def attack_before_each_request(
    faults: Faults,
    change: Change,
    apply: Apply,
    actions: tuple[str, ...] = ("DELETE ",),
    between: Callable[[Cell], None] = lambda cell: None,
) -> list[Cell]:
    """Every cell up to the window or the first wrong action; `between` checks each cell
    that sent nothing, before its change is undone."""
    cells: list[Cell] = []
    while True:
        n = len(cells) + 1
        undo: list[Callable[[], None]] = []

        def before(index: int, _method: str, _target: str, n: int = n, undo: Any = undo) -> None:
            if index == n:
                undo.append(change(n))

        faults.reset_counts()
        faults.before_answer = before
        try:
            code, out, log = apply()
        finally:
            faults.before_answer = None
        if not undo:
            pytest.fail(f"apply made fewer than {n} requests and never acted: {out}")
        sent = [line for line in faults.log if line.startswith(actions)]
        raced_at = faults.log[n - 1]
        cell = Cell(n, raced_at, sent, code, out, log, raced_at.startswith(actions))
        cells.append(cell)
        if cell.sent:
            undo[0]()
            return cells
        between(cell)
        undo[0]()

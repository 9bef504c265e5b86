"""Long-running operations, as ARM runs them: accepted, polled, then Succeeded or Failed.

Compute's deallocate and deletes and Network's deletes all go through here;
an operation completes after `ArmState.polls_until_done` polls, so a test
shows that the SDK really polls.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.state import ArmState


@dataclass
class Operation:
    """A long-running operation (deallocate/delete) that completes after N polls."""

    id: str
    location: str
    started: datetime
    polls_left: int
    finish: Callable[[], None]  # applied once, when the operation succeeds
    status: str = "InProgress"
    ended: datetime | None = None
    # Set when the operation is to fail: (ARM error code, message). `undo` then
    # puts back what `begin_*` changed, as ARM leaves a VM whose deallocate failed.
    error: tuple[str, str] | None = None
    undo: Callable[[], None] | None = None


def begin(
    state: ArmState,
    location: str,
    finish: Callable[[], None],
    error: tuple[str, str] | None = None,
    undo: Callable[[], None] | None = None,
) -> Operation:
    """A new operation that applies `finish` when it succeeds (or `undo` when it fails)."""
    with state.lock:
        op = Operation(
            id=str(uuid.uuid4()),
            location=location,
            started=datetime.now(UTC),
            polls_left=state.polls_until_done,
            finish=finish,
            error=error,
            undo=undo,
        )
        state.operations[op.id] = op
        if op.polls_left <= 0:
            _complete(op)
        return op


def poll(state: ArmState, operation_id: str) -> Operation | None:
    """One poll of an operation: advances it, as time would on real ARM."""
    with state.lock:
        op = state.operations.get(operation_id)
        if op is None or op.status != "InProgress" or state.hold_operations:
            return op
        op.polls_left -= 1
        if op.polls_left <= 0:
            _complete(op)
        return op


def _complete(op: Operation) -> None:
    if op.error is not None:
        if op.undo is not None:
            op.undo()
        op.status = "Failed"
    else:
        op.finish()
        op.status = "Succeeded"
    op.ended = datetime.now(UTC)

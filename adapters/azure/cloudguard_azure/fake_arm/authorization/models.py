"""Microsoft.Authorization's state: management locks, at any scope."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.state import ArmState


@dataclass
class ManagementLock:
    """A management lock at a scope (subscription, group or resource ARM id)."""

    scope: str
    name: str
    level: str  # CanNotDelete | ReadOnly
    notes: str = ""

    @property
    def id(self) -> str:
        return f"{self.scope}/providers/Microsoft.Authorization/locks/{self.name}"


def add_lock(state: ArmState, scope: str, name: str, level: str = "CanNotDelete") -> ManagementLock:
    with state.lock:
        lock = ManagementLock(scope.rstrip("/"), name, level)
        state.locks.append(lock)
        return lock


def locks_at(state: ArmState, scope: str) -> list[ManagementLock]:
    """Locks at `scope` and at the scopes above it (ARM lists inherited locks too)."""
    wanted = scope.rstrip("/").casefold()
    with state.lock:
        return [
            lock
            for lock in state.locks
            if wanted == lock.scope.casefold() or wanted.startswith(lock.scope.casefold() + "/")
        ]

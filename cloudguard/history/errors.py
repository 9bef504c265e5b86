"""Why the history could not be used. Every one is "did not run" (75) and names the store.

A history that cannot be read or written is never replaced by a fresh one: a
new store would call every known orphan "new" and forget what was paid.
"""

from __future__ import annotations


class HistoryError(Exception):
    """The store named `location` cannot be used; the message says why and what to do."""

    def __init__(self, location: str, reason: str) -> None:
        super().__init__(f"history store {location}: {reason}")
        self.location = location
        self.reason = reason


class HistoryCorrupt(HistoryError):
    """The store exists but is not a readable cloudguard history (damaged, or something else)."""


class HistoryBusy(HistoryError):
    """Another audit held the store for longer than the busy timeout."""


class HistoryUnavailable(HistoryError):
    """The store cannot be opened or reached (permissions, disk, server, missing driver)."""


class HistoryTooNew(HistoryError):
    """Written by a newer cloudguard whose schema this one does not know."""

"""An in-memory cloud for the reap engine and CLI tests, loaded through a real EntryPoint.

`WORLD` is what `current` answers; `ACTED` records every action; ids in
`READ_FAILS` / `ACT_FAILS` raise the typed errors; an id in `CRASH_ON_ACT`
raises a BaseException mid-action, as a killed process would stop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from cloudguard.audit.model import Resource, SweepRequest
from cloudguard.reap.model import ActionError, Live, PlanItem, ReadError, ReaperUnavailable

WORLD: dict[str, Resource] = {}
ACTED: list[tuple[str, str]] = []
READ: list[str] = []
READ_FAILS: set[str] = set()
ACT_FAILS: set[str] = set()
CRASH_ON_ACT: set[str] = set()
REQUESTS: list[SweepRequest] = []
CLOSED: list[str] = []
ON_READ: dict[str, Callable[[], None]] = {}  # id -> what happens in the world as it is read
ON_ACT: list[Callable[[PlanItem], None]] = []  # called inside every action, before it is done


class Crash(BaseException):
    """Not an Exception: nothing in the engine may catch it, like a SIGKILL."""


def reset() -> None:
    for collection in (
        WORLD,
        ACTED,
        READ,
        READ_FAILS,
        ACT_FAILS,
        CRASH_ON_ACT,
        REQUESTS,
        CLOSED,
        ON_READ,
        ON_ACT,
    ):
        collection.clear()


class FakeReaper:
    def __init__(self, request: SweepRequest) -> None:
        REQUESTS.append(request)

    def current(self, item: PlanItem) -> Live | None:
        READ.append(item.id)
        if item.id in ON_READ:
            ON_READ[item.id]()
        if item.id in READ_FAILS:
            raise ReadError(f"fake {item.id}", "HTTP 403 AuthorizationFailed")
        found = WORLD.get(item.id)
        return None if found is None else Live(found)

    def act(self, item: PlanItem, action: str) -> None:
        for hook in ON_ACT:
            hook(item)
        if item.id in CRASH_ON_ACT:
            raise Crash(item.id)
        if item.id in ACT_FAILS:
            raise ActionError(f"fake {item.id}", f"{action} failed: HTTP 409 Conflict")
        ACTED.append((item.id, action))
        state = {"deallocate": "deallocated", "stop": "stopped"}.get(action)
        if state is None:
            WORLD.pop(item.id, None)
        else:
            WORLD[item.id] = replace(WORLD[item.id], power_state=state)

    def close(self) -> None:
        CLOSED.append("fake")


class FakeAdapter:
    name = "azure"

    def reaper(self, request: SweepRequest) -> FakeReaper:
        return FakeReaper(request)


class UnavailableAdapter:
    name = "azure"

    def reaper(self, request: SweepRequest) -> FakeReaper:
        raise ReaperUnavailable("azure credential default", "no token: tried everything")


class SweepOnlyAdapter:
    name = "azure"

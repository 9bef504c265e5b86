"""An in-memory cloud for the reap engine and CLI tests, loaded through a real EntryPoint.

`WORLD` is what `current` answers; `ACTED` records every action; ids in
`READ_FAILS` / `ACT_FAILS` raise the typed errors; an id in `CRASH_ON_ACT`
raises a BaseException mid-action, as a killed process would stop.

Its live side is fake, its rules are not: registered as `azure` it answers
with the Azure adapter's rules (tag-name case, verbs, ids), as `aws`
(`FakeAws`) with the AWS adapter's, as the one registry hands them out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cloudguard_aws.adapter import AwsAdapter
from cloudguard_azure.adapter import AzureAdapter

from cloudguard.cloud.reaping import ActionError, Live, ReadError, ReaperUnavailable
from cloudguard.cloud.records import Resource, SweepRequest
from cloudguard.documents.plan import PlanItem

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
            WORLD[item.id] = WORLD[item.id]._replace(power_state=state)

    def close(self) -> None:
        CLOSED.append("fake")


class _RulesOf:
    """A real cloud's rules, none of its live sides (`sweep`, `reaper` are the fake's own)."""

    real: type = AzureAdapter

    def __getattr__(self, name: str) -> Any:
        if name in ("sweep", "reaper"):
            raise AttributeError(name)
        return getattr(self.real(), name)


class FakeAdapter(_RulesOf):
    def reaper(self, request: SweepRequest) -> FakeReaper:
        return FakeReaper(request)


class FakeAws(FakeAdapter):
    real = AwsAdapter


class UnavailableAdapter(_RulesOf):
    def reaper(self, request: SweepRequest) -> FakeReaper:
        raise ReaperUnavailable("azure credential default", "no token: tried everything")


class SweepOnlyAdapter(_RulesOf):
    pass

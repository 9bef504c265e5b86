"""Tiny adapters for `--provider` tests, loaded through a real `EntryPoint`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cloudguard.cloud.records import Resource, SourceFailure, SweepRequest, SweepResult

SEEN: list[SweepRequest] = []


class FakeAdapter:
    name = "fake"

    def sweep(self, request: SweepRequest) -> SweepResult:
        SEEN.append(request)
        return SweepResult(
            resources=(
                Resource(
                    provider="azure",
                    account=request.subscriptions[0] if request.subscriptions else "",
                    region="eastus",
                    group="pilot",
                    id="/subscriptions/s/resourceGroups/pilot/providers/x/vm-live",
                    name="vm-live",
                    kind="vm",
                    size="Standard_D4as_v6",
                    power_state="running",
                    created=datetime.now(UTC) - timedelta(days=1),
                    tags={"task-id": "t-live"},
                    source="fake",
                ),
            )
        )


class PartialAdapter:
    name = "partial"

    def sweep(self, request: SweepRequest) -> SweepResult:
        return SweepResult(
            resources=(),
            failures=(SourceFailure("azure subscription s-2", "HTTP 403 AuthorizationFailed"),),
        )


class CrashingAdapter:
    name = "crashing"

    def sweep(self, request: SweepRequest) -> SweepResult:
        raise RuntimeError("token expired")


class WrongResultAdapter:
    name = "wrong"

    def sweep(self, request: SweepRequest) -> object:
        return {"resources": []}

"""What an SDK is attempting right now, so the socket guard can name it on the record.

The SDK hooks (botocore, azure-core) no longer refuse anything: they only
say which logical call is under way (SDK, service, operation, URL) for as
long as it runs. The decision is made where bytes would leave, at the
socket; a mock that answers above the socket (responses, requests-mock,
vcrpy, aioresponses, moto, Stubber, ...) means the socket is never reached
and nothing is recorded.

A context variable, not a global: concurrent calls in threads and asyncio
tasks each see their own attempt. Stdlib only and cheap to import.
"""

from __future__ import annotations

from contextvars import ContextVar

TYPE_CHECKING = False  # not `from typing import`: typing costs every sealed Python child ~5 ms

if TYPE_CHECKING:
    from collections.abc import Iterator

    from cloudguard.guard.inprocess.declared import InProcessGuard


class Attempt:
    """One logical SDK call; retries inside it share it, so it is recorded once per target."""

    __slots__ = ("guard", "method", "operation", "parent", "recorded", "service", "url")

    def __init__(
        self,
        guard: InProcessGuard,
        *,
        service: str = "",
        operation: str = "",
        method: str = "",
        url: str = "",
        parent: Attempt | None = None,
    ) -> None:
        self.guard = guard  # the SDK's guard: the `via`, the words and the advice of a refusal
        self.service = service
        self.operation = operation
        self.method = method
        self.url = url  # without its query string: a presigned URL or SAS is a credential
        self.parent = parent  # the call this one serves (a token fetch for an ARM request)
        self.recorded: set[str] = set()  # targets already recorded for this call

    def naming(self) -> str:
        """`s3 ListBuckets`, `Microsoft.Compute GET virtualMachines`: what the call was."""
        return " ".join(part for part in (self.service, self.operation) if part)

    def chain(self) -> Iterator[Attempt]:
        attempt: Attempt | None = self
        while attempt is not None:
            yield attempt
            attempt = attempt.parent


current: ContextVar[Attempt | None] = ContextVar("cloudguard_attempt", default=None)

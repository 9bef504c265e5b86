"""azure-core: name each Azure call for the socket guard; refuse nothing here.

Every azure-core client sends through `Pipeline.run` (async:
`AsyncPipeline.run`), azure-identity's own token pipelines included. The
hook names the logical call (service and operation from the ARM path, the
URL without its query, which may hold a SAS) for as long as it runs: the
retry policy retries inside it, so a refusal is recorded once per call, and
a token fetch made on behalf of an ARM request names that request as what
it was `for`.

The decision is made at the socket (`socket_guard`). responses and
requests-mock answer inside requests, vcrpy swaps the connection class,
aioresponses answers in aiohttp's session, a test's own transport answers
in process: none reaches a socket, none is recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from cloudguard.guard.inprocess import patches
from cloudguard.guard.inprocess.attempt import Attempt, current
from cloudguard.guard.inprocess.declared import AZURE_CORE


def patch_sync(module: ModuleType) -> None:
    patches.swap(module.Pipeline, "run", _named_run)


def patch_async(module: ModuleType) -> None:
    patches.swap(module.AsyncPipeline, "run", _named_async_run)


def naming(method: str, url: str) -> Attempt:
    """`Microsoft.Compute` and `GET virtualMachines/start` from an ARM URL; host and path else."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    lowered = [s.lower() for s in segments]
    service, operation = parts.hostname or "", f"{method} {parts.path}"
    if "providers" in lowered:
        at = len(lowered) - 1 - lowered[::-1].index("providers")
        if at + 1 < len(segments):
            # After the namespace: type, name, type, name, ... (an action has no name).
            service = segments[at + 1]
            operation = f"{method} {'/'.join(segments[at + 2 :: 2])}".rstrip()
    shown = f"{parts.scheme}://{parts.netloc}{parts.path}"
    return Attempt(AZURE_CORE, service=service, operation=operation, method=method, url=shown)


def _attempt(request: Any) -> Attempt:
    attempt = naming(str(request.method), str(request.url))
    attempt.parent = current.get()  # a token fetch made for another call
    return attempt


def _named_run(original: Callable[..., Any]) -> Callable[..., Any]:
    def run(self: Any, request: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # cloudguard's own frames: pytest leaves them out of tracebacks
        token = current.set(_attempt(request))
        try:
            return original(self, request, **kwargs)
        finally:
            current.reset(token)

    return run


def _named_async_run(original: Callable[..., Any]) -> Callable[..., Any]:
    async def run(self: Any, request: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        token = current.set(_attempt(request))
        try:
            return await original(self, request, **kwargs)
        finally:
            current.reset(token)

    return run

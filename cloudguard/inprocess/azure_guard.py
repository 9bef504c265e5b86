"""azure-core: refuse at the pipeline's transport runner, sync and async.

Every azure-core pipeline ends in `_TransportRunner.send` (async:
`_AsyncTransportRunner.send`), azure-identity's own token pipelines
included, so one patch per runner sees every Azure SDK request.

Refused: a request to a non-loopback host that the runner would hand to one
of azure-core's network transports (requests, aiohttp, asyncio/trio over
requests) or a subclass of one. Passed: loopback hosts, and a transport the
test built itself that is none of those (an in-process fake, the azure-core
counterpart of moto's `@mock_aws`); if such a transport does open a
connection to a cloud host after all, the socket guard sees the name.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from cloudguard.inprocess import hosts, patches
from cloudguard.inprocess.refusal import refuse

NETWORK_TRANSPORTS = frozenset(
    {
        ("azure.core.pipeline.transport._requests_basic", "RequestsTransport"),
        ("azure.core.pipeline.transport._requests_asyncio", "AsyncioRequestsTransport"),
        ("azure.core.pipeline.transport._requests_trio", "TrioRequestsTransport"),
        ("azure.core.pipeline.transport._aiohttp", "AioHttpTransport"),
    }
)


def patch_sync(module: ModuleType) -> None:
    patches.swap(module._TransportRunner, "send", _guarded_send)


def patch_async(module: ModuleType) -> None:
    patches.swap(module._AsyncTransportRunner, "send", _guarded_async_send)


def _is_network(transport: object) -> bool:
    return any(
        (klass.__module__, klass.__qualname__) in NETWORK_TRANSPORTS
        for klass in type(transport).__mro__
    )


def _check(runner: Any, request: Any) -> None:
    http_request = request.http_request
    url = str(http_request.url)
    parts = urlsplit(url)
    if hosts.is_loopback(parts.hostname) or not _is_network(runner._sender):
        return
    shown = f"{parts.scheme}://{parts.netloc}{parts.path}"  # the query may hold a SAS token
    refuse(
        via="azure-core",
        target=parts.hostname or url,
        argv=[str(http_request.method), shown],
        what=f"an Azure request {http_request.method} {shown}",
    )


def _guarded_send(original: Callable[..., Any]) -> Callable[..., Any]:
    def send(self: Any, request: Any) -> Any:
        _check(self, request)
        return original(self, request)

    return send


def _guarded_async_send(original: Callable[..., Any]) -> Callable[..., Any]:
    async def send(self: Any, request: Any) -> Any:
        _check(self, request)
        return await original(self, request)

    return send

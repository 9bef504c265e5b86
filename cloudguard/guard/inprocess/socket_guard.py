"""Where bytes would leave: the one place the in-process guards decide.

Patched on the `socket` module, so whoever goes through Python's socket
module is seen: urllib3, requests, aiohttp and asyncio, httpx, a C
extension that calls `socket.socket(...).connect`. `socket.create_connection`
resolves through `socket.getaddrinfo` and connects through
`socket.socket.connect`, so it is covered by both.

Refused, after recording:

- during an SDK call (botocore, azure-core: see `attempt`), every connection
  to and every name lookup of a host that is not loopback, recorded under
  the SDK's name with its service, operation and URL;
- at any time, cloud host names and metadata endpoints (`hosts.is_guarded`),
  whoever asks. Other hosts outside an SDK call are not this guard's business.

A mock that answers above the socket (responses, requests-mock, vcrpy,
aioresponses, moto, ...) never gets here, so it is never recorded. A name is
judged by its spelling and an address by its bytes: nothing is resolved to
decide.
"""

from __future__ import annotations

import socket

from cloudguard.guard import hosts
from cloudguard.guard.inprocess import patches
from cloudguard.guard.inprocess.attempt import Attempt, current
from cloudguard.guard.inprocess.declared import SOCKET
from cloudguard.guard.inprocess.refusal import refuse

TYPE_CHECKING = False  # not `from typing import`: typing costs every sealed Python child ~5 ms

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType
    from typing import Any

_INET = (socket.AF_INET, socket.AF_INET6)


def install(module: ModuleType) -> None:
    """Patch the `socket` module, just imported: its socket class's connects, its lookups."""
    patches.swap(module.socket, "connect", _guarded_connect)
    patches.swap(module.socket, "connect_ex", _guarded_connect)
    for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex"):
        patches.swap(module, name, _guarded_lookup(name))


def patch_event_loop(module: ModuleType) -> None:
    """asyncio resolves names in a worker thread, which does not see the caller's context.

    Judge the lookup in the caller's context instead, where the SDK call that
    wants it is known; the thread's own `socket.getaddrinfo` still refuses
    cloud names whoever asks.
    """
    patches.swap(module.BaseEventLoop, "getaddrinfo", _guarded_loop_lookup)


def judge(host: object, port: object, action: str) -> None:
    """Refuse (after recording) when this connection or lookup would leave for a cloud."""
    __tracebackhide__ = True  # cloudguard's own frames: pytest leaves them out of tracebacks
    if not isinstance(host, str | bytes):
        return
    attempt = current.get()
    if attempt is not None and not hosts.is_loopback(host):
        _refuse_attempt(attempt, host, port, action)
    elif hosts.is_guarded(host):
        target = f"{hosts.normalize(host)}:{port}" if port is not None else hosts.normalize(host)
        refuse(
            via=SOCKET.via,
            target=target,
            argv=[action, target],
            what=f"{action} {target}",
            hint=SOCKET.hint,
        )


def _refuse_attempt(attempt: Attempt, host: str | bytes, port: object, action: str) -> None:
    __tracebackhide__ = True
    from urllib.parse import urlsplit  # only on a refusal: every sealed Python child imports us

    address = f"{hosts.normalize(host)}:{port}" if port is not None else hosts.normalize(host)
    target = hosts.normalize(urlsplit(attempt.url).hostname) if attempt.url else ""
    target = target or hosts.normalize(host)
    extra: dict[str, object] = {"operation": attempt.naming(), "socket": f"{action} {address}"}
    if attempt.parent is not None:
        served = attempt.parent
        extra["for"] = " ".join(p for p in (served.naming(), served.method, served.url) if p)
    shown = " ".join(p for p in (attempt.method, attempt.url) if p)
    already = target in attempt.recorded
    attempt.recorded.add(target)
    refuse(
        via=attempt.guard.via,
        target=target,
        argv=[p for p in (attempt.method, attempt.url) if p] or [action, address],
        what=f"{attempt.guard.request or 'a request'} {shown} ({attempt.naming()})",
        hint=attempt.guard.hint,
        extra=extra,
        already_recorded=already,
    )


def _guarded_connect(original: Callable[..., Any]) -> Callable[..., Any]:
    def connect(self: socket.socket, address: Any, *args: Any) -> Any:
        __tracebackhide__ = True
        if self.family in _INET and isinstance(address, tuple) and address:
            judge(address[0], address[1] if len(address) > 1 else None, "socket connect to")
        return original(self, address, *args)

    return connect


def _guarded_lookup(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def make(original: Callable[..., Any]) -> Callable[..., Any]:
        def lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True
            judge(host, args[0] if args else kwargs.get("port"), f"name lookup ({name}) of")
            return original(host, *args, **kwargs)

        return lookup

    return make


def _guarded_loop_lookup(original: Callable[..., Any]) -> Callable[..., Any]:
    async def getaddrinfo(self: Any, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        if current.get() is not None:
            judge(host, port, "name lookup (asyncio getaddrinfo) of")
        return await original(self, host, port, *args, **kwargs)

    return getaddrinfo

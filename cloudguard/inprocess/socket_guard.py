"""Raw sockets: refuse connections and name lookups for cloud hosts and metadata endpoints.

Patched on the `socket` module, so whoever goes through Python's socket
module is seen: urllib3, requests, aiohttp and asyncio, httpx, a C
extension that calls `socket.socket(...).connect`. `socket.create_connection`
resolves through `socket.getaddrinfo` and connects through
`socket.socket.connect`, so it is covered by both.

Only cloud host families and metadata addresses are refused here (the
SDK-level guards refuse every non-loopback request of their SDK); other
hosts are not this plugin's business. A name is judged by its spelling and
an address by its bytes: nothing is resolved to decide.
"""

from __future__ import annotations

import socket

from cloudguard.inprocess import hosts, patches
from cloudguard.inprocess.refusal import refuse

TYPE_CHECKING = False  # not `from typing import`: typing costs every sealed Python child ~5 ms

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_INET = (socket.AF_INET, socket.AF_INET6)


def install() -> None:
    patches.swap(socket.socket, "connect", _guarded_connect)
    patches.swap(socket.socket, "connect_ex", _guarded_connect)
    for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex"):
        patches.swap(socket, name, _guarded_lookup(name))


def _refuse(host: str | bytes, port: object, action: str) -> None:
    target = f"{hosts.normalize(host)}:{port}" if port is not None else hosts.normalize(host)
    refuse(via="socket", target=target, argv=[action, target], what=f"{action} {target}")


def _guarded_connect(original: Callable[..., Any]) -> Callable[..., Any]:
    def connect(self: socket.socket, address: Any, *args: Any) -> Any:
        if self.family in _INET and isinstance(address, tuple) and address:
            host = address[0]
            if isinstance(host, str | bytes) and hosts.is_guarded(host):
                _refuse(host, address[1] if len(address) > 1 else None, "socket connect to")
        return original(self, address, *args)

    return connect


def _guarded_lookup(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def make(original: Callable[..., Any]) -> Callable[..., Any]:
        def lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(host, str | bytes) and hosts.is_guarded(host):
                port = args[0] if args else kwargs.get("port")
                _refuse(host, port, f"name lookup ({name}) of")
            return original(host, *args, **kwargs)

        return lookup

    return make

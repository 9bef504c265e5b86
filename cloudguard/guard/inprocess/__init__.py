"""In-process guards: judged at the socket, named by botocore and azure-core. Record, then refuse.

    from cloudguard.guard import inprocess
    inprocess.install(log="/path/to/armed.jsonl")

Installed by the pytest plugin in the test process and by the seal's
`sitecustomize` in every Python child started under a seal. Importing this
package imports no SDK: botocore and azure-core are patched when (and if)
they are imported. Only the socket guard refuses; the SDK hooks name the
call under way so the record says what it was (see `attempt`). Loopback
endpoints are never refused; there is no switch that lets anything else
through.
"""

from __future__ import annotations

from cloudguard.guard.inprocess import imports, patches
from cloudguard.guard.inprocess.refusal import CloudReachRefused, bind

TYPE_CHECKING = False  # not `from typing import`: typing costs every sealed Python child ~5 ms

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

    from cloudguard.guard.refuse import Policy

# The guards are imported only when what they guard is: the SDK guards import
# urllib.parse, and `socket` alone (enum, selectors) costs a Python child ~7 ms.
SOCKET_MODULE = "socket"
BOTOCORE_MODULE = "botocore.httpsession"
BOTOCORE_CLIENT_MODULE = "botocore.client"
ASYNCIO_LOOP_MODULE = "asyncio.base_events"
AZURE_SYNC_MODULE = "azure.core.pipeline._base"
AZURE_ASYNC_MODULE = "azure.core.pipeline._base_async"

__all__ = ["GUARDS", "CloudReachRefused", "install", "installed", "uninstall"]


def _patch_botocore(module: ModuleType) -> None:
    from cloudguard.guard.inprocess import botocore_guard

    botocore_guard.patch(module)


def _patch_botocore_client(module: ModuleType) -> None:
    from cloudguard.guard.inprocess import botocore_guard

    botocore_guard.patch_client(module)


def _patch_azure_sync(module: ModuleType) -> None:
    from cloudguard.guard.inprocess import azure_guard

    azure_guard.patch_sync(module)


def _patch_azure_async(module: ModuleType) -> None:
    from cloudguard.guard.inprocess import azure_guard

    azure_guard.patch_async(module)


def _patch_socket(_module: ModuleType) -> None:
    from cloudguard.guard.inprocess import socket_guard

    socket_guard.install()


def _patch_event_loop(module: ModuleType) -> None:
    from cloudguard.guard.inprocess import socket_guard

    socket_guard.patch_event_loop(module)


def _socket() -> None:
    imports.when_imported(SOCKET_MODULE, _patch_socket)
    imports.when_imported(ASYNCIO_LOOP_MODULE, _patch_event_loop)


def _botocore() -> None:
    imports.when_imported(BOTOCORE_MODULE, _patch_botocore)
    imports.when_imported(BOTOCORE_CLIENT_MODULE, _patch_botocore_client)


def _azure_core() -> None:
    imports.when_imported(AZURE_SYNC_MODULE, _patch_azure_sync)
    imports.when_imported(AZURE_ASYNC_MODULE, _patch_azure_async)


# Each guard by the `via` it records. cloudguard's own negative controls replace an entry
# to prove the suite goes red without it; it is not a setting users have.
GUARDS: dict[str, Callable[[], None]] = {
    "botocore": _botocore,
    "azure-core": _azure_core,
    "socket": _socket,
}

_installed: set[str] = set()


def install(*, log: str | None, policy: Policy | None = None) -> None:
    """Bind the reach log and install every guard (idempotent: a second call only rebinds)."""
    bind(log, policy)
    for name, guard in GUARDS.items():
        if name not in _installed:
            guard()
            _installed.add(name)


def installed() -> frozenset[str]:
    """The guards installed in this process (the SDK ones may still be waiting for an import)."""
    return frozenset(_installed)


def uninstall() -> None:
    """Put every patched function back (for a pytest run that ends inside a longer process)."""
    for name in (
        SOCKET_MODULE,
        ASYNCIO_LOOP_MODULE,
        BOTOCORE_MODULE,
        BOTOCORE_CLIENT_MODULE,
        AZURE_SYNC_MODULE,
        AZURE_ASYNC_MODULE,
    ):
        imports.forget(name)
    patches.restore_all()
    _installed.clear()
    bind(None)

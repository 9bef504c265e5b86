"""The test fence: in every process of a pytester run, nothing but loopback is reachable.

cloudguard's own suite makes real SDK calls to real cloud host names on
purpose, and its negative controls switch guards off. This fence lies
beneath the guards (it is installed at interpreter start, before any guard)
and fails every name lookup and connection that is not loopback, the way
an offline machine would: `socket.gaierror` and `ConnectionRefusedError`.
So with a guard disabled the call still never leaves the machine; it just
fails the ordinary way, which callers swallow. That is the hazard the
guards exist for, shown without a packet sent.

It chains to the next sitecustomize on the path, as cloudguard's does.
"""

from __future__ import annotations

import errno
import os
import socket
import sys

_INET = (socket.AF_INET, socket.AF_INET6)


def _loopback(host: object) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    name = host.strip("[]").rstrip(".").lower()
    if name in ("localhost", "::1", "") or name.endswith(".localhost"):
        return True
    try:
        return socket.inet_aton(name)[0] == 127 and name.count(".") == 3
    except OSError:
        return False


def _fence_lookup(original):  # type: ignore[no-untyped-def]
    def lookup(host, *args, **kwargs):  # type: ignore[no-untyped-def]
        if host is not None and not _loopback(host):
            raise socket.gaierror(socket.EAI_NONAME, f"test fence: {host!r} is not resolvable")
        return original(host, *args, **kwargs)

    return lookup


def _fence_connect(original, *, ex: bool):  # type: ignore[no-untyped-def]
    def connect(self, address, *args):  # type: ignore[no-untyped-def]
        if self.family in _INET and not _loopback(address[0]):
            if ex:
                return errno.ECONNREFUSED
            raise ConnectionRefusedError(errno.ECONNREFUSED, f"test fence: {address!r}")
        return original(self, address, *args)

    return connect


socket.getaddrinfo = _fence_lookup(socket.getaddrinfo)
socket.gethostbyname = _fence_lookup(socket.gethostbyname)
socket.gethostbyname_ex = _fence_lookup(socket.gethostbyname_ex)
socket.socket.connect = _fence_connect(socket.socket.connect, ex=False)  # type: ignore[method-assign]
socket.socket.connect_ex = _fence_connect(socket.socket.connect_ex, ex=True)  # type: ignore[method-assign]
socket.cloudguard_test_fence = True  # type: ignore[attr-defined]


def _chain() -> None:
    finder = next(f for f in sys.meta_path if getattr(f, "__name__", "") == "PathFinder")
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = finder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        import importlib.util

        module = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)


_chain()

"""gRPC: where a channel's C-core would start sending; record, then refuse a cloud target.

grpcio's C-core resolves names and opens its connections itself: no byte of
a gRPC channel passes Python's `socket` module, so the socket guard never
sees one (a test proves it). This guard stands where the C-core is told to
send, which is not where a channel is made: a channel starts idle and
resolves and connects only for a call or when asked to connect. So a
channel to `pubsub.googleapis.com:443` that is made and never used (a GAPIC
client whose stub a test patches: `mock.patch.object(type(client.transport.
list_topics), "__call__")`) is hermetic and not recorded, and:

- every call a multicallable starts (`__call__`, `with_call`, `future`,
  sync and `grpc.aio` alike), and
- every request to connect (`Channel.subscribe(..., try_to_connect=True)`,
  which `grpc.channel_ready_future` makes; aio `get_state(try_to_connect=True)`,
  which `channel_ready()` makes)

to a target whose host is a cloud host or a metadata endpoint
(`hosts.is_guarded`, by spelling, as the socket guard judges) is recorded
under `grpc`, naming the RPC, then refused. Loopback targets (an emulator on
localhost, `grpc.server` on 127.0.0.1, a unix socket) pass. A channel's
interceptors run above the call, so a test's interceptor that answers is
hermetic too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

from cloudguard.guard import hosts
from cloudguard.guard.inprocess import patches
from cloudguard.guard.inprocess.declared import GRPC
from cloudguard.guard.inprocess.refusal import refuse

# Multicallable class -> the methods that start a call.
_SYNC_CALLS = {
    "_UnaryUnaryMultiCallable": ("__call__", "with_call", "future"),
    "_SingleThreadedUnaryStreamMultiCallable": ("__call__",),
    "_UnaryStreamMultiCallable": ("__call__",),
    "_StreamUnaryMultiCallable": ("__call__", "with_call", "future"),
    "_StreamStreamMultiCallable": ("__call__",),
}
_AIO_CALLS = (
    "UnaryUnaryMultiCallable",
    "UnaryStreamMultiCallable",
    "StreamUnaryMultiCallable",
    "StreamStreamMultiCallable",
)
# Target schemes that name no network host: a local socket or a process's own.
_LOCAL_SCHEMES = ("unix", "unix-abstract", "vsock")
# Schemes without `//` that grpc reads as such; anything else before a `:` is a host name.
_SCHEMES = ("dns", "ipv4", "ipv6", *_LOCAL_SCHEMES)
_ATTRIBUTE = "_cloudguard_target"  # an aio channel's target, which it does not keep itself


def patch(module: ModuleType) -> None:
    """`grpc._channel`, just imported: its multicallables' calls and its channel's connect."""
    for name, methods in _SYNC_CALLS.items():
        owner = getattr(module, name, None)  # a release without the single-threaded one
        if owner is None:
            continue
        for method in methods:
            patches.swap(owner, method, _judged_call(method, _sync_target))
    patches.swap(module.Channel, "subscribe", _judged_subscribe)


def patch_aio(module: ModuleType) -> None:
    """`grpc.aio._channel`, just imported: its channel remembers its target; calls judge it."""
    patches.swap(module.Channel, "__init__", _remembering_init)
    patches.swap(module.Channel, "get_state", _judged_get_state)
    for name in _AIO_CALLS:
        patches.swap(getattr(module, name), "__call__", _judged_call("__call__", _aio_target))


def target_hosts(target: str) -> Iterator[tuple[str, str]]:
    """Each (host, port) a channel target names: `host:port`, `dns:///host:port`,
    `dns://resolver/host`, `ipv4:a:p,b:p`, `ipv6:[::1]:443`, `google-c2p:///host`, ...; none
    for a unix socket."""
    scheme, _, rest = target.partition(":")
    if scheme not in _SCHEMES and not rest.startswith("//"):
        scheme, rest = "", target  # `host:443`, `[::1]:443`: grpc resolves them as dns names
    if scheme in _LOCAL_SCHEMES:
        return
    if rest.startswith("//"):
        rest = rest[2:].partition("/")[2]  # the authority names a resolver, not the target
    for address in rest.split(",") if scheme in ("ipv4", "ipv6") else (rest,):
        yield _host_port(address.strip())


def _host_port(address: str) -> tuple[str, str]:
    if address.startswith("["):
        host, _, port = address[1:].partition("]")
        return host, port.lstrip(":") or "443"
    if address.count(":") == 1:
        host, _, port = address.partition(":")
        return host, port or "443"
    return address, "443"  # a bare name, or an IPv6 address without brackets or port


def judge(target: str, rpc: str, action: str) -> None:
    """Refuse (after recording) when this target names a cloud host or a metadata endpoint."""
    __tracebackhide__ = True  # cloudguard's own frames: pytest leaves them out of tracebacks
    for host, port in target_hosts(target):
        if hosts.is_guarded(host):
            service, _, method = rpc.strip("/").rpartition("/")
            extra = {"operation": f"{service} {method}".strip(), "channel": target}
            address = f"{hosts.normalize(host)}:{port}"
            refuse(
                via=GRPC.via,
                target=hosts.normalize(host),
                argv=[rpc or action, address],
                what=f"{GRPC.request} {rpc or '(' + action + ')'} to {address}",
                hint=GRPC.hint,
                extra=extra,
            )


def _text(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value or "")


def _sync_target(multicallable: Any) -> str:
    return _text(getattr(multicallable, "_target", ""))


def _aio_target(multicallable: Any) -> str:
    references = getattr(multicallable, "_references", None) or [None]
    return _text(getattr(references[0], _ATTRIBUTE, ""))


def _judged_call(name: str, target_of: Callable[[Any], str]) -> Callable[..., Any]:
    def make(original: Callable[..., Any]) -> Callable[..., Any]:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True
            judge(target_of(self), _text(getattr(self, "_method", "")), "a call")
            return original(self, *args, **kwargs)

        call.__name__ = name
        return call

    return make


def _judged_subscribe(original: Callable[..., Any]) -> Callable[..., Any]:
    def subscribe(self: Any, callback: Any, try_to_connect: bool = False) -> Any:
        __tracebackhide__ = True
        if try_to_connect:
            judge(_text(getattr(self, "_target", "")), "", "connect")
        return original(self, callback, try_to_connect=try_to_connect)

    return subscribe


def _remembering_init(original: Callable[..., Any]) -> Callable[..., Any]:
    def __init__(self: Any, target: str, *args: Any, **kwargs: Any) -> None:
        setattr(self, _ATTRIBUTE, target)
        original(self, target, *args, **kwargs)

    return __init__


def _judged_get_state(original: Callable[..., Any]) -> Callable[..., Any]:
    def get_state(self: Any, try_to_connect: bool = False) -> Any:
        __tracebackhide__ = True
        if try_to_connect:
            judge(_text(getattr(self, _ATTRIBUTE, "")), "", "connect")
        return original(self, try_to_connect)

    return get_state

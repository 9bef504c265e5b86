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

is judged by everything the C-core would reach for it (`reached`), by
spelling, as the socket guard judges (`hosts.is_guarded`): the target's
hosts, the DNS server a `dns://SERVER/` target names, the metadata server a
`google-c2p:` target asks where it runs, the xDS servers an `xds:` target's
bootstrap names, and, for a target that is not loopback, the authority the
channel's options claim (`grpc.ssl_target_name_override`,
`grpc.default_authority`: a Google name pre-resolved to one of Google's
addresses). A cloud host or metadata endpoint among them is recorded under
`grpc`, naming the RPC, then refused. Loopback targets (an emulator on
localhost, `grpc.server` on 127.0.0.1, a fake spoken to under Google's
authority) and unix sockets pass. A channel's interceptors run above the
call (a grpc.aio channel's are judged where the last one continues), so a
test's interceptor that answers is hermetic too.

The guard remembers what a channel's options claim when the channel is
made. A channel made before the guard was installed (a plugin's import) was
never seen: its target is still known (a sync multicallable keeps it, an aio
one's C-core channel says it), its options are not, so a call on it to a
host that is not loopback is refused (fail closed); so is a call whose
target grpc does not say.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextvars import ContextVar
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
# grpc.aio's call objects: (request or iterator, deadline, metadata, credentials,
# wait_for_ready, channel, method, ...), made by the multicallable or the last interceptor.
_AIO_CALL_OBJECTS = ("UnaryUnaryCall", "UnaryStreamCall", "StreamUnaryCall", "StreamStreamCall")
# The channel methods that make a multicallable: each hands it what the channel's options claim.
_FACTORIES = ("unary_unary", "unary_stream", "stream_unary", "stream_stream")
# Target schemes that name no network host: a local socket or a process's own.
_LOCAL_SCHEMES = ("unix", "unix-abstract", "vsock")
# Schemes without `//` that grpc reads as such; anything else before a `:` is a host name.
_SCHEMES = ("dns", "ipv4", "ipv6", *_LOCAL_SCHEMES)
# Channel options that set the name the C-core authenticates the server as and sends as :authority.
_AUTHORITY_OPTIONS = ("grpc.ssl_target_name_override", "grpc.default_authority")
# google-c2p's resolver asks the metadata server for the zone and IPv6 support first.
_C2P_METADATA = ("metadata.google.internal", "80")
_CLAIMED = "_cloudguard_authorities"  # the authorities a channel's options claim
_UNKNOWN = "a grpc.aio channel whose target grpc does not say"


def patch(module: ModuleType) -> None:
    """`grpc._channel`, just imported: its multicallables' calls and its channel's connect."""
    for name, methods in _SYNC_CALLS.items():
        owner = getattr(module, name, None)  # a release without the single-threaded one
        if owner is None:
            continue
        for method in methods:
            patches.swap(owner, method, _judged_call(method, _sync_target))
    patches.swap(module.Channel, "subscribe", _judged_subscribe)
    patches.swap(module.Channel, "__init__", _claims_remembered)
    for factory in _FACTORIES:
        patches.swap(module.Channel, factory, _claims_handed_on)


def patch_aio(module: ModuleType) -> None:
    """`grpc.aio._channel`, just imported: its channel remembers its claims; calls judge it."""
    patches.swap(module.Channel, "__init__", _claims_remembered)
    patches.swap(module.Channel, "get_state", _judged_get_state)
    for name in _AIO_CALLS:
        patches.swap(getattr(module, name), "__call__", _judged_call("__call__", _aio_target))


def patch_aio_calls(module: ModuleType) -> None:
    """`grpc.aio._call`, just imported: the call an aio channel's interceptors continue to.

    grpc.aio runs a channel's interceptors inside the multicallable's call, in a task of
    their own: a call that has them is judged where the last one continues, when (and if)
    the C-core call is made, so an interceptor that answers itself is hermetic, as a sync
    `grpc.intercept_channel` one is."""
    for name in _AIO_CALL_OBJECTS:
        patches.swap(getattr(module, name), "__init__", _judged_continuation)


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


def reached(target: str, authorities: tuple[str, ...] = ()) -> Iterator[tuple[str, str]]:
    """Everything the C-core would reach for a call on this channel, as (host, port)."""
    named = list(target_hosts(target))
    yield from named
    scheme, _, rest = target.partition(":")
    resolver = rest[2:].partition("/")[0] if rest.startswith("//") else ""
    if scheme == "dns" and resolver:
        yield _host_port(resolver, "53")  # the DNS server it asks: the metadata server is one
    elif scheme == "google-c2p":
        yield _C2P_METADATA
    elif scheme == "xds":
        for server in _xds_servers():
            yield from target_hosts(server)
    if named and not all(hosts.is_loopback(host) for host, _ in named):
        # Google's name on an address of Google's: the call is Google's wherever it connects.
        for authority in authorities:
            yield _host_port(authority)


def _xds_servers() -> list[str]:
    """The xDS servers the C-core's bootstrap names (the file or the JSON its variables give)."""
    import json  # only for an xds: target

    text = os.environ.get("GRPC_XDS_BOOTSTRAP_CONFIG", "")
    path = os.environ.get("GRPC_XDS_BOOTSTRAP", "")
    if not text and path:
        try:
            with open(path, encoding="utf-8") as file:
                text = file.read()
        except OSError:
            return []  # nor can the C-core read it: it reaches nothing
    try:
        config = json.loads(text) if text else {}
    except ValueError:
        return []
    if not isinstance(config, dict):
        return []
    servers = list(config.get("xds_servers") or [])
    for authority in (config.get("authorities") or {}).values():
        if isinstance(authority, dict):
            servers += authority.get("xds_servers") or []
    return [str(s.get("server_uri", "")) for s in servers if isinstance(s, dict)]


def _host_port(address: str, default_port: str = "443") -> tuple[str, str]:
    if address.startswith("["):
        host, _, port = address[1:].partition("]")
        return host, port.lstrip(":") or default_port
    if address.count(":") == 1:
        host, _, port = address.partition(":")
        return host, port or default_port
    return address, default_port  # a bare name, or an IPv6 address without brackets or port


def judge(
    target: str | None, rpc: str, action: str, authorities: tuple[str, ...] | None = ()
) -> None:
    """Refuse (after recording) when this call would reach a cloud host or a metadata endpoint.

    `authorities` None: the channel was made before the guard was installed, its options
    unread; `target` None: grpc does not say where it goes. Either is refused unless what is
    known of it is local: the guard cannot judge it (fail closed)."""
    __tracebackhide__ = True  # cloudguard's own frames: pytest leaves them out of tracebacks
    service, _, method = rpc.strip("/").rpartition("/")
    extra: dict[str, object] = {"operation": f"{service} {method}".strip()}
    what = f"{GRPC.request} {rpc or '(' + action + ')'}"
    if target is None:
        refuse(
            via=GRPC.via,
            target=_UNKNOWN,
            argv=[rpc or action],
            what=f"{what} on {_UNKNOWN}, whose target cannot be known",
            hint=GRPC.hint,
            extra=extra,
        )
    extra["channel"] = target
    for host, port in reached(target, authorities or ()):
        if hosts.is_guarded(host):
            address = f"{hosts.normalize(host)}:{port}"
            refuse(
                via=GRPC.via,
                target=hosts.normalize(host),
                argv=[rpc or action, address],
                what=f"{what} to {address}",
                hint=GRPC.hint,
                extra=extra,
            )
    if authorities is None:
        for host, port in target_hosts(target):
            if not hosts.is_loopback(host):
                address = f"{hosts.normalize(host)}:{port}"
                refuse(
                    via=GRPC.via,
                    target=hosts.normalize(host),
                    argv=[rpc or action, address],
                    what=f"{what} to {address} on a channel made before cloudguard's guard was "
                    "installed, whose options (the authority it claims) cannot be read",
                    hint=GRPC.hint,
                    extra=extra,
                )


def _text(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value or "")


def _claimed(options: object) -> tuple[str, ...]:
    """The authorities a channel's options claim (`grpc.ssl_target_name_override`, ...)."""
    try:
        pairs = list(options or ())  # type: ignore[call-overload]
    except TypeError:
        return ()
    return tuple(
        _text(pair[1])
        for pair in pairs
        if isinstance(pair, tuple) and len(pair) == 2 and pair[0] in _AUTHORITY_OPTIONS
    )


class _Target(bytes):
    """A multicallable's target (bytes, as grpc keeps it) that carries its channel's claims;
    `authorities` None: a channel made before the guard, whose options were never seen."""

    authorities: tuple[str, ...] | None = None


def _sync_target(multicallable: Any) -> tuple[str | None, tuple[str, ...] | None]:
    target = getattr(multicallable, "_target", b"")
    # Plain bytes: a multicallable made before the guard, by a channel it never saw made.
    return _text(target), target.authorities if isinstance(target, _Target) else None


def _aio_target(multicallable: Any) -> tuple[str | None, tuple[str, ...] | None]:
    # The C-core channel says where it goes (grpc.aio's own channel keeps no target), whenever it
    # was made; what its options claim was seen only if it was made after the guard.
    target = getattr(getattr(multicallable, "_channel", None), "target", None)
    references = getattr(multicallable, "_references", None) or [None]
    return (None if target is None else _text(target)), getattr(references[0], _CLAIMED, None)


# (what its channel claims,) of an intercepted aio call, for its interceptors' task (which
# copies the context it is made in); None outside one.
_intercepted: ContextVar[tuple[tuple[str, ...] | None] | None] = ContextVar(
    "cloudguard_grpc_intercepted", default=None
)


def _judged_call(
    name: str, target_of: Callable[[Any], tuple[str | None, tuple[str, ...] | None]]
) -> Callable[..., Any]:
    def make(original: Callable[..., Any]) -> Callable[..., Any]:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True
            target, authorities = target_of(self)
            if getattr(self, "_interceptors", None):  # grpc.aio's: judged where they continue
                token = _intercepted.set((authorities,))
                try:
                    return original(self, *args, **kwargs)
                finally:
                    _intercepted.reset(token)
            judge(target, _text(getattr(self, "_method", "")), "a call", authorities)
            return original(self, *args, **kwargs)

        call.__name__ = name
        return call

    return make


def _judged_continuation(original: Callable[..., Any]) -> Callable[..., Any]:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        __tracebackhide__ = True
        intercepted = _intercepted.get()
        if intercepted is not None:  # an intercepted call (the others were judged already)
            channel = args[5] if len(args) > 5 else kwargs.get("channel")
            method = args[6] if len(args) > 6 else kwargs.get("method", b"")
            target = getattr(channel, "target", None)
            shown = None if target is None else _text(target)
            judge(shown, _text(method), "a call", intercepted[0])
        original(self, *args, **kwargs)

    return __init__


def _judged_subscribe(original: Callable[..., Any]) -> Callable[..., Any]:
    def subscribe(self: Any, callback: Any, try_to_connect: bool = False) -> Any:
        __tracebackhide__ = True
        if try_to_connect:
            judge(_text(getattr(self, "_target", "")), "", "connect", getattr(self, _CLAIMED, None))
        return original(self, callback, try_to_connect=try_to_connect)

    return subscribe


def _options(args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
    return args[0] if args else kwargs.get("options")


def _claims_remembered(original: Callable[..., Any]) -> Callable[..., Any]:
    def __init__(self: Any, target: str, *args: Any, **kwargs: Any) -> None:
        setattr(self, _CLAIMED, _claimed(_options(args, kwargs)))
        original(self, target, *args, **kwargs)

    return __init__


def _claims_handed_on(original: Callable[..., Any]) -> Callable[..., Any]:
    def factory(self: Any, *args: Any, **kwargs: Any) -> Any:
        multicallable = original(self, *args, **kwargs)
        target = _Target(getattr(multicallable, "_target", b""))
        target.authorities = getattr(self, _CLAIMED, None)  # None: made before the guard
        multicallable._target = target  # grpc reads it only to report the call's target
        return multicallable

    factory.__name__ = getattr(original, "__name__", "factory")
    return factory


def _judged_get_state(original: Callable[..., Any]) -> Callable[..., Any]:
    def get_state(self: Any, try_to_connect: bool = False) -> Any:
        __tracebackhide__ = True
        if try_to_connect:
            target = getattr(getattr(self, "_channel", None), "target", None)
            shown = None if target is None else _text(target)
            judge(shown, "", "connect", getattr(self, _CLAIMED, None))
        return original(self, try_to_connect)

    return get_state

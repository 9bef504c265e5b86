"""google-auth: name each Google REST call and token fetch for the socket guard; refuse nothing.

Every REST client of Google's (the `google-cloud-*` libraries, their GAPIC
REST transports, `google-api-python-client` over google-auth-httplib2 aside)
sends through google-auth's authorized sessions or google-cloud-core's
connection, and every credential refreshes through a google-auth transport
`Request`:

- `AuthorizedSession.request` (requests), `AuthorizedHttp.urlopen`
  (urllib3), the first aiohttp transport's session (`transport._aiohttp_requests`;
  the asyncio one's, `aio.transport.sessions`, sends through its `Request`,
  named below) and google-cloud-core's `JSONConnection._do_request`
  (whatever session a client was given: `storage.Client(_http=requests.Session())`):
  the logical API call (service from the host, operation from the path, the
  URL without its query, which may hold a signed URL's signature); the same
  call one layer down (the connection's session) is the same attempt;
- `Request.__call__` of every transport (requests, urllib3, the bare
  http.client one, both aiohttp ones): the asyncio session's API call, or a token fetch
  (`oauth2.googleapis.com/token`, an STS exchange, an impersonation) or a
  metadata probe (`google.auth.default()` pings 169.254.169.254 through the
  requests one), named as the call it served (`for ...`) when an API call is
  under way.

The decision is made at the socket (`socket_guard`). responses and
requests-mock answer inside requests, vcrpy swaps the connection class, a
patched `google.auth.default` or explicit AnonymousCredentials never fetch a
token, an emulator or a fake on loopback is loopback: none is recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import Token
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from cloudguard.guard import hosts
from cloudguard.guard.inprocess import patches
from cloudguard.guard.inprocess.attempt import Attempt, current
from cloudguard.guard.inprocess.declared import GOOGLE_AUTH

# A REST path's version segment: what follows it alternates collection and resource name.
_VERSION_PREFIX = "v"


def patch_requests(module: ModuleType) -> None:
    patches.swap(module.AuthorizedSession, "request", _named_call)
    patches.swap(module.Request, "__call__", _named_fetch)


def patch_urllib3(module: ModuleType) -> None:
    patches.swap(module.AuthorizedHttp, "urlopen", _named_call)
    patches.swap(module.Request, "__call__", _named_fetch)


def patch_http_client(module: ModuleType) -> None:
    """google-auth's bare http.client transport: its token fetches and metadata pings."""
    patches.swap(module.Request, "__call__", _named_fetch)


def patch_aiohttp_requests(module: ModuleType) -> None:
    """google-auth's first aiohttp transport (`transport._aiohttp_requests`)."""
    patches.swap(module.AuthorizedSession, "request", _named_async_call)
    patches.swap(module.Request, "__call__", _named_async_fetch)


def patch_aio_aiohttp(module: ModuleType) -> None:
    """google-auth's asyncio transport (`aio.transport.aiohttp`): its token fetches."""
    patches.swap(module.Request, "__call__", _named_async_fetch)


def patch_cloud_connection(module: ModuleType) -> None:
    """google-cloud-core's JSON connection (`google.cloud._http`): every REST call of storage,
    bigquery, ... on whatever session the client holds, an AuthorizedSession or not."""
    patches.swap(module.JSONConnection, "_do_request", _named_call)


def naming(method: str, url: str) -> Attempt:
    """`storage GET b/o` and `compute GET projects/zones/instances:start` from an API URL;
    `credentials POST token` for a token endpoint or the metadata server."""
    parts = urlsplit(url)
    host = hosts.normalize(parts.hostname)
    segments = [s for s in parts.path.split("/") if s]
    if hosts.is_metadata(host) or host.split(".", 1)[0] in ("oauth2", "sts", "iamcredentials"):
        service, operation = "credentials", f"{method} {parts.path or '/'}"
    else:
        service = host.split(".", 1)[0]
        versions = [i for i, s in enumerate(segments) if _is_version(s)]
        names = segments[versions[0] + 1 :: 2] if versions else segments
        verb = segments[-1].partition(":")[2] if segments and ":" in segments[-1] else ""
        operation = f"{method} {'/'.join(n.partition(':')[0] for n in names)}".rstrip()
        operation += f":{verb}" if verb else ""
    shown = f"{parts.scheme}://{parts.netloc}{parts.path}"
    return Attempt(GOOGLE_AUTH, service=service, operation=operation, method=method, url=shown)


def _is_version(segment: str) -> bool:
    # v1, v2beta1, v1alpha: a REST API's version, after which the resource path starts.
    return segment[:1] == _VERSION_PREFIX and segment[1:2].isdigit()


def _begin(method: object, url: object) -> Token[Attempt | None] | None:
    """Make this call the one under way; None when it already is (the connection's session
    sending the connection's call), so one call stays one attempt."""
    attempt = naming(str(method).upper(), str(url))
    under_way = current.get()
    if under_way is not None and (under_way.method, under_way.url) == (
        attempt.method,
        attempt.url,
    ):
        return None
    # A call made on behalf of another (a resumable upload), a token fetch for an API call.
    attempt.parent = under_way
    return current.set(attempt)


def _end(token: Token[Attempt | None] | None) -> None:
    if token is not None:
        current.reset(token)


def _named_call(original: Callable[..., Any]) -> Callable[..., Any]:
    def request(self: Any, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # cloudguard's own frames: pytest leaves them out of tracebacks
        token = _begin(method, url)
        try:
            return original(self, method, url, *args, **kwargs)
        finally:
            _end(token)

    return request


def _named_fetch(original: Callable[..., Any]) -> Callable[..., Any]:
    def __call__(self: Any, url: str, method: str = "GET", *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        token = _begin(method, url)
        try:
            return original(self, url, method, *args, **kwargs)
        finally:
            _end(token)

    return __call__


# The aiohttp transports' calls are coroutines: the attempt is under way while one runs, in its
# task's context (where asyncio's lookup and connect are judged), not while it is created.


def _named_async_call(original: Callable[..., Any]) -> Callable[..., Any]:
    async def request(self: Any, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        token = _begin(method, url)
        try:
            return await original(self, method, url, *args, **kwargs)
        finally:
            _end(token)

    return request


def _named_async_fetch(original: Callable[..., Any]) -> Callable[..., Any]:
    async def __call__(self: Any, url: str, method: str = "GET", *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        token = _begin(method, url)
        try:
            return await original(self, url, method, *args, **kwargs)
        finally:
            _end(token)

    return __call__

"""google-auth: name each Google REST call and token fetch for the socket guard; refuse nothing.

Every REST client of Google's (the `google-cloud-*` libraries, their GAPIC
REST transports, `google-api-python-client` over google-auth-httplib2 aside)
sends through google-auth's authorized sessions, and every credential
refreshes through a google-auth transport `Request`:

- `AuthorizedSession.request` (requests) and `AuthorizedHttp.urlopen`
  (urllib3): the logical API call (service from the host, operation from the
  path, the URL without its query, which may hold a signed URL's signature);
- `Request.__call__` of the requests and urllib3 transports: a token fetch
  (`oauth2.googleapis.com/token`, an STS exchange, an impersonation) or a
  metadata probe (`google.auth.default()` pings 169.254.169.254 through the
  requests one), named as the call it served (`for ...`) when an API call is
  under way. google-auth's bare http.client transport is not named: what it
  sends to a cloud host or the metadata server is refused as `socket`.

The decision is made at the socket (`socket_guard`). responses and
requests-mock answer inside requests, vcrpy swaps the connection class, a
patched `google.auth.default` or explicit AnonymousCredentials never fetch a
token, an emulator or a fake on loopback is loopback: none is recorded.
"""

from __future__ import annotations

from collections.abc import Callable
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


def _named_call(original: Callable[..., Any]) -> Callable[..., Any]:
    def request(self: Any, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # cloudguard's own frames: pytest leaves them out of tracebacks
        attempt = naming(str(method).upper(), str(url))
        attempt.parent = current.get()  # a call made on behalf of another (a resumable upload)
        token = current.set(attempt)
        try:
            return original(self, method, url, *args, **kwargs)
        finally:
            current.reset(token)

    return request


def _named_fetch(original: Callable[..., Any]) -> Callable[..., Any]:
    def __call__(self: Any, url: str, method: str = "GET", *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        attempt = naming(str(method).upper(), str(url))
        attempt.parent = current.get()  # the API call whose credentials this refreshes
        token = current.set(attempt)
        try:
            return original(self, url, method, *args, **kwargs)
        finally:
            current.reset(token)

    return __call__

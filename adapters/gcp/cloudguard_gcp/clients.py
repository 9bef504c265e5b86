"""The Google clients a sweep reads with: endpoint, CA bundle, retries, and one line per error.

Both APIs are read with their own google-cloud-* clients over REST (no gRPC): Cloud
Asset Inventory's `AssetServiceClient` and Compute Engine's `InstancesClient`,
`DisksClient` and `AddressesClient` (and, for the reaper, the zone and region
Operations clients). `--management-endpoint` (a fake on loopback) is
each client's `api_endpoint`; `--ca-bundle` and the proxy rule are set on the
transport's requests session (the REST transports take neither): a loopback
endpoint is reached directly, never through an HTTPS_PROXY from the environment.

Retries are the sweep's budget (`--retries`): throttling (429), 500, 502, 503,
504 and broken connections are retried with jittered exponential backoff, each
page on its own budget; anything else (401, 403, 404, 400) is final at once.
Google imports live inside the functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cloudguard.cloud.endpoints import is_loopback_endpoint
from cloudguard.cloud.records import SweepRequest

TIMEOUT = 60.0  # seconds: one request's connect and read timeout
BACKOFF_FIRST = 0.5  # seconds: the first retry's longest wait (doubled each time, jittered)
BACKOFF_MAX = 30.0


def asset_client(credentials: Any, request: SweepRequest) -> Any:
    from google.cloud import asset_v1

    return _configured(
        asset_v1.AssetServiceClient(
            credentials=credentials, transport="rest", client_options=_options(request)
        ),
        request,
    )


def compute_client(kind: str, credentials: Any, request: SweepRequest) -> Any:
    """The Compute Engine client of `kind` (instances, disks, addresses; the reaper's
    zoneOperations and regionOperations)."""
    from google.cloud import compute_v1

    make = {
        "instances": compute_v1.InstancesClient,
        "disks": compute_v1.DisksClient,
        "addresses": compute_v1.AddressesClient,
        "zoneOperations": compute_v1.ZoneOperationsClient,
        "regionOperations": compute_v1.RegionOperationsClient,
    }[kind]
    return _configured(
        make(credentials=credentials, transport="rest", client_options=_options(request)),
        request,
    )


def _options(request: SweepRequest) -> dict[str, str] | None:
    return {"api_endpoint": request.endpoint.rstrip("/")} if request.endpoint else None


def _configured(client: Any, request: SweepRequest) -> Any:
    configure_session(client, request.endpoint, request.ca_bundle)
    return client


def configure_session(client: Any, endpoint: str | None, ca_bundle: str | None) -> None:
    """A REST client's transport session (an AuthorizedSession, a requests.Session): its
    `verify` is the CA bundle, and for a loopback endpoint no environment setting
    (HTTPS_PROXY, a REQUESTS_CA_BUNDLE) may redirect it or its token. Also the price
    list's (cloudguard_gcp.prices)."""
    session = client._transport._session
    if ca_bundle:
        session.verify = ca_bundle
    if is_loopback_endpoint(endpoint):
        session.trust_env = False


def retry(request: SweepRequest) -> Any:
    """A google-api-core Retry spending at most `request.retries` retries (one page's)."""
    import requests
    from google.api_core import exceptions
    from google.api_core import retry as retries

    transient = (
        exceptions.TooManyRequests,
        exceptions.InternalServerError,
        exceptions.BadGateway,
        exceptions.ServiceUnavailable,
        exceptions.GatewayTimeout,
        requests.ConnectionError,
        requests.Timeout,
    )
    left = [request.retries]

    def worth_retrying(exc: Exception) -> bool:
        if not isinstance(exc, transient) or left[0] <= 0:
            return False
        left[0] -= 1
        return True

    return retries.Retry(
        predicate=worth_retrying,
        initial=BACKOFF_FIRST,
        maximum=BACKOFF_MAX,
        multiplier=2.0,
        timeout=None,  # the count is the budget, not a deadline
    )


def first_page(method: Callable[..., Any], request: SweepRequest, **asked: Any) -> Any:
    """The first page `method` answers (a GAPIC pager's), without following its
    `next_page_token`: the sweep pages itself, each page on its own retry budget."""
    pager = method(request=asked, retry=retry(request), timeout=TIMEOUT)
    return next(iter(pager.pages))


def describe_error(exc: BaseException) -> str:
    """One line: the HTTP status and Google's message, or what broke the connection."""
    import requests
    from google.api_core import exceptions

    if isinstance(exc, exceptions.RetryError) and exc.cause is not None:
        exc = exc.cause
    if isinstance(exc, exceptions.GoogleAPICallError):
        reason = getattr(exc, "reason", None)  # Google's ErrorInfo reason, where given
        message = _first_line(exc.message or "")
        # The REST clients prefix the message with the request ("GET https://...: ").
        _, sep, rest = message.partition(": ")
        if sep and message.split(" ", 1)[0] in ("GET", "POST"):
            message = rest
        return f"HTTP {exc.code}{f' {reason}' if reason else ''}: {message}"
    if isinstance(exc, requests.ConnectionError):
        return f"could not connect: {_first_line(str(exc))}"
    return f"{type(exc).__name__}: {_first_line(str(exc))}"


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else ""

"""The Google clients a sweep reads with: endpoint, CA bundle, retries, and one line per error.

Both APIs are read with their own google-cloud-* clients over REST (no gRPC): Cloud
Asset Inventory's `AssetServiceClient` and Compute Engine's clients of each kind
listed or reaped (`InstancesClient`, `DisksClient`, `RegionDisksClient`,
`AddressesClient`, `GlobalAddressesClient`, `SnapshotsClient`, and the reaper's
zone, region and global Operations clients). `--management-endpoint` (a fake on loopback) is
each client's `api_endpoint`; `--ca-bundle` and the proxy rule are set on the
transport's requests session (the REST transports take neither): a loopback
endpoint is reached directly, never through an HTTPS_PROXY from the environment.

Retries are the sweep's budget (`--retries`): throttling (429), 500, 502, 503,
504 and broken connections are retried with jittered exponential backoff, each
page on its own budget; anything else (401, 403, 404, 400) is final at once.
An answer that says `Retry-After` (seconds, or an HTTP date) is waited for at
least that long, capped at BACKOFF_MAX: asking sooner only buys another 429 and
spends the budget. Google imports live inside the functions.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
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
    """The Compute Engine client of `kind`, named as the API names its collection
    (instances, disks, regionDisks, addresses, globalAddresses, snapshots; the reaper's
    zoneOperations, regionOperations and globalOperations)."""
    from google.cloud import compute_v1

    make = {
        "instances": compute_v1.InstancesClient,
        "disks": compute_v1.DisksClient,
        "regionDisks": compute_v1.RegionDisksClient,
        "addresses": compute_v1.AddressesClient,
        "globalAddresses": compute_v1.GlobalAddressesClient,
        "snapshots": compute_v1.SnapshotsClient,
        "zoneOperations": compute_v1.ZoneOperationsClient,
        "regionOperations": compute_v1.RegionOperationsClient,
        "globalOperations": compute_v1.GlobalOperationsClient,
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


def retry(request: SweepRequest) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The sweep's and the reaper's `retry_spending`: `request.retries` (`--retries`)."""
    return retry_spending(request.retries)


def retry_spending(retries: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A GAPIC call's `retry` (the client wraps its call in it: `retry(call)`) spending at most
    `retries` retries (one page's), each after `wait`. Ours, not google-api-core's Retry:
    that one draws its backoff before it sees the error, so it cannot obey the error's
    Retry-After. The one retry of every Google call here: the sweep's, the reaper's and
    the price list's (cloudguard_gcp.prices)."""
    import requests
    from google.api_core import exceptions
    from google.api_core.retry import exponential_sleep_generator

    transient = (
        exceptions.TooManyRequests,
        exceptions.InternalServerError,
        exceptions.BadGateway,
        exceptions.ServiceUnavailable,
        exceptions.GatewayTimeout,
        requests.ConnectionError,
        requests.Timeout,
    )

    def wrap(call: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(call)
        def retried(*args: Any, **kwargs: Any) -> Any:
            backoff = exponential_sleep_generator(BACKOFF_FIRST, BACKOFF_MAX, multiplier=2.0)
            for _ in range(retries):
                try:
                    return call(*args, **kwargs)
                except transient as exc:
                    time.sleep(wait(next(backoff), exc))
            return call(*args, **kwargs)  # the last attempt: what it raises is final

        return retried

    return wrap


def wait(backoff: float, exc: BaseException) -> float:
    """Seconds before the next attempt: the jittered backoff, or longer when the answer asked
    for longer (Retry-After), never past BACKOFF_MAX."""
    return min(BACKOFF_MAX, max(backoff, retry_after(exc)))


def retry_after(exc: BaseException) -> float:
    """The seconds an HTTP answer's `Retry-After` asks for (delay-seconds or an HTTP date;
    the REST clients' exception keeps the requests.Response), 0 where it asks nothing."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    value = str(headers.get("Retry-After") or "").strip() if headers is not None else ""
    if value.isdecimal():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return 0.0  # none, or not a form RFC 9110 knows
    if when.tzinfo is None:  # "-0000": a date in UTC without a source zone
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


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

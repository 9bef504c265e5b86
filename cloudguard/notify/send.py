"""Delivering a notification to each webhook: retries with backoff, failures reported.

A webhook's URL is a secret (whoever has a Slack or Teams webhook URL can
post to the channel), so it is best given through an environment variable
(`url-env`), and no message ever shows it: a webhook is named by its `name`
and the URL's host. Only `https://` is sent to, or `http://` to a loopback
receiver (a local relay, the tests). Redirects are not followed: the body
goes to the URL that was configured or nowhere.

Retried: connection errors and timeouts, 408, 429 and 5xx answers, waiting
`backoff` seconds and twice as long each time (or what `Retry-After` asks,
up to `max_wait`). Any other answer is final. A webhook that still fails is a
`NotifyFailure`; the caller reports it (and exits 75 when configured to).
"""

from __future__ import annotations

import ipaddress
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from cloudguard import __version__
from cloudguard.escape import one_line
from cloudguard.notify.message import Notification
from cloudguard.notify.payloads import PAYLOADS

KINDS = tuple(PAYLOADS)
RETRIED_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class Webhook:
    kind: str  # one of KINDS
    name: str  # how messages name it
    url: str | None = None  # inline (discouraged: the file would hold a secret)
    url_env: str | None = None  # or the name of the environment variable holding it


@dataclass(frozen=True)
class Delivery:
    retries: int = 4  # after the first attempt
    timeout: float = 10.0  # seconds per attempt
    backoff: float = 2.0  # seconds before the first retry, doubled for each next one
    max_wait: float = 60.0  # the most any one wait may be, whatever Retry-After asks


@dataclass(frozen=True)
class NotifyFailure:
    webhook: str  # its name and host, never its URL
    reason: str

    def __str__(self) -> str:
        return f"{self.webhook}: {self.reason}"


class _Final(Exception):
    """An attempt whose answer says retrying will not help."""


class _Retry(Exception):
    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.wait = wait


def deliver(
    notification: Notification,
    webhooks: list[Webhook],
    delivery: Delivery = Delivery(),
    *,
    environ: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> list[NotifyFailure]:
    """Send `notification` to every webhook; the ones that failed (none when all took it)."""
    environ = os.environ if environ is None else environ
    failures = []
    for webhook in webhooks:
        url, problem = _url(webhook, environ)
        label = _label(webhook, url)
        if problem is not None or url is None:
            failures.append(NotifyFailure(label, problem or "no URL"))
            continue
        body = json.dumps(PAYLOADS[webhook.kind](notification), ensure_ascii=False).encode()
        reason = _post_with_retries(url, body, delivery, sleep)
        if reason is not None:
            failures.append(NotifyFailure(label, _without(url, reason)))
    return failures


def _without(url: str, text: str) -> str:
    """`text` with the URL, and its path (the secret part of a webhook URL), blanked."""
    parts = urlsplit(url)
    for secret in (url, parts.path + ("?" + parts.query if parts.query else ""), parts.path):
        if len(secret) > 1:
            text = text.replace(secret, "<the webhook URL>")
    return text


def _url(webhook: Webhook, environ: Mapping[str, str]) -> tuple[str | None, str | None]:
    url = webhook.url
    if webhook.url_env is not None:
        url = environ.get(webhook.url_env)
        if not url:
            return None, f"${webhook.url_env} is not set: nothing was sent"
    if url is None:
        return None, "no url or url-env"
    problem = check_url(url)
    return url, None if problem is None else f"{problem}: nothing was sent"


# Where a cloud's instance metadata answers (credentials included): never a webhook. A body
# posted there from a cloud VM would reach the one service that hands out its identity.
_METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata", "instance-data"})


def check_url(url: str) -> str | None:
    """Why `url` is not sent to (None when it is fine)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (reading it checks it)
    except ValueError as error:
        return f"not a valid URL ({error})"
    if _link_local(parts.hostname):
        return (
            f"the URL's host {parts.hostname} is link-local or a cloud's metadata service, "
            "never a webhook"
        )
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and _loopback(parts.hostname):
        return None
    return "the URL must be https:// (http:// only to a loopback receiver)"


def _link_local(host: str | None) -> bool:
    if host is None:
        return False
    if host.casefold().rstrip(".") in _METADATA_HOSTS:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    # 169.254.0.0/16 (169.254.169.254 on every cloud), fe80::/10, AWS's fd00:ec2::254.
    return address.is_link_local or address == ipaddress.ip_address("fd00:ec2::254")


def _loopback(host: str | None) -> bool:
    if host == "localhost":
        return True
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _label(webhook: Webhook, url: str | None) -> str:
    host = urlsplit(url).hostname if url else None
    return f"webhook {one_line(webhook.name, 60)} ({webhook.kind}" + (
        f", {one_line(host, 80)})" if host else ")"
    )


def _post_with_retries(
    url: str, body: bytes, delivery: Delivery, sleep: Callable[[float], None]
) -> str | None:
    """None when delivered; else why the last attempt failed (and how many were made)."""
    opener = _opener(url)
    attempts = delivery.retries + 1
    for attempt in range(attempts):
        try:
            _post(opener, url, body, delivery.timeout)
            return None
        except _Final as final:
            return str(final)
        except _Retry as retry:
            if attempt + 1 == attempts:
                return f"{retry} (after {attempts} attempts)"
            wait = delivery.backoff * 2**attempt
            if retry.wait is not None:
                wait = max(wait, retry.wait)
            sleep(min(wait, delivery.max_wait))
    raise AssertionError("unreachable")  # pragma: no cover


def _opener(url: str) -> urllib.request.OpenerDirector:
    handlers: list[Any] = [_NoRedirects()]
    if _loopback(urlsplit(url).hostname):
        handlers.append(urllib.request.ProxyHandler({}))  # a local receiver: never a proxy
    return urllib.request.build_opener(*handlers)


def _post(opener: urllib.request.OpenerDirector, url: str, body: bytes, timeout: float) -> None:
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json; charset=utf-8",
            "User-Agent": f"cloudguard-ci/{__version__}",
        },
    )
    try:
        with opener.open(request, timeout=timeout) as response:
            response.read(4096)
    except urllib.error.HTTPError as error:
        answer = one_line(error.read(300).decode("utf-8", "replace"), 200) if error.fp else ""
        reason = f"HTTP {error.code}" + (f": {answer}" if answer else "")
        if error.code in RETRIED_STATUSES:
            raise _Retry(reason, _retry_after(error.headers.get("Retry-After"))) from None
        raise _Final(reason) from None
    except (urllib.error.URLError, OSError) as error:
        cause = getattr(error, "reason", error)
        raise _Retry(f"cannot reach it: {one_line(str(cause), 200)}") from None


def _retry_after(value: str | None) -> float | None:
    try:
        return max(float(value), 0.0) if value is not None else None
    except ValueError:
        return None  # an HTTP date: the backoff decides


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the 3xx becomes an HTTPError: final, the body sent nowhere else

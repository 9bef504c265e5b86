"""Where a sweep may send a credential: one rule for every cloud, that every adapter asks.

Real credentials (a token, SigV4 keys and their session token) go only to the
cloud's own management endpoints, over HTTPS. A loopback endpoint is a
fake's, and whoever listens on 127.0.0.1 (any local user can) must never
receive a real identity: it gets only the adapter's fake credential, a fixed
string that is good nowhere. Anything else (an unknown host, plain HTTP) gets
nothing. The converse holds too: the fake credential is refused off
loopback, so it can never carry a sweep to a real cloud. Both are facts of
the endpoint's spelling (the guard's own loopback rule, one rule not two),
never a switch.

An adapter describes its cloud once (`CloudEndpoints`: its name, its fake
credential's name, its management hosts) and asks `credential_for` before any
credential is built. Stdlib only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from cloudguard.guard.hosts import is_loopback


class EndpointRefused(ValueError):
    """This credential may not go to this endpoint: nothing is sent (the sweep did not run)."""


@dataclass(frozen=True)
class CloudEndpoints:
    cloud: str  # as messages name it: "Azure", "AWS"
    fake_credential: str  # the --credential name of the fake's fixed credential
    hosts: re.Pattern[str]  # the cloud's own management hosts (full match, lower case)
    described: str  # those hosts, for a person: "management.azure.com, ..."


def is_loopback_endpoint(endpoint: str | None) -> bool:
    """The endpoint URL's host is loopback (127.0.0.0/8, ::1, localhost)."""
    return bool(endpoint) and is_loopback(urlsplit(endpoint or "").hostname)


def credential_for(rule: CloudEndpoints, endpoint: str | None, credential: str | None) -> bool:
    """Whether the fake credential (True) or a real one (False) goes to `endpoint` (None:
    the cloud's default). EndpointRefused when `credential` may not go there at all."""
    name = credential or "default"
    fake = name.strip().lower() == rule.fake_credential
    if is_loopback_endpoint(endpoint):
        if fake:
            return True
        raise EndpointRefused(
            f"a loopback --management-endpoint ({endpoint}) is answered only by the "
            f"{rule.fake_credential!r} credential: credential {name!r} would hand a real "
            f"{rule.cloud} identity to whoever listens there"
        )
    if fake:
        raise EndpointRefused(
            f"credential {rule.fake_credential!r} answers only a loopback "
            f"--management-endpoint (got {endpoint or 'the public endpoint'})"
        )
    if endpoint:
        parts = urlsplit(endpoint)
        host = (parts.hostname or "").lower()
        if parts.scheme != "https" or parts.username or not rule.hosts.fullmatch(host):
            raise EndpointRefused(
                f"--management-endpoint {endpoint} is not one of {rule.cloud}'s own "
                f"endpoints over HTTPS ({rule.described}): real credentials go only there "
                f"(a fake on loopback takes --credential {rule.fake_credential})"
            )
    return False

"""Where a sweep may send a credential: a loopback management endpoint is a fake's.

An adapter that accepts an endpoint override (`--management-endpoint`)
judges it with the guard's own rule for loopback hosts, so the auditor and
the guard never disagree on what "loopback" is (one rule, not two). Stdlib
only.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from cloudguard.guard.hosts import is_loopback


def is_loopback_endpoint(endpoint: str | None) -> bool:
    """The endpoint URL's host is loopback (127.0.0.0/8, ::1, localhost)."""
    return bool(endpoint) and is_loopback(urlsplit(endpoint or "").hostname)

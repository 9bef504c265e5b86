"""How long a retried Google call waits: the backoff, or what the answer's Retry-After asks
(seconds or an HTTP date), never past BACKOFF_MAX. Read from the exception google-api-core
raises for a REST answer (it keeps the requests.Response); the wait itself is measured
through the real clients in test_gcp_live.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
import requests
from cloudguard_gcp.clients import BACKOFF_MAX, retry_after, wait
from google.api_core import exceptions


def throttled(retry_after_header: str | None) -> exceptions.TooManyRequests:
    response = requests.Response()
    response.status_code = 429
    if retry_after_header is not None:
        response.headers["Retry-After"] = retry_after_header
    return exceptions.TooManyRequests("Quota exceeded", response=response)


@pytest.mark.parametrize(
    ("header", "asked"),
    [("7", 7.0), (" 2 ", 2.0), ("0", 0.0), (None, 0.0), ("soon", 0.0), ("-3", 0.0), ("", 0.0)],
)
def test_retry_after_in_seconds_and_what_is_no_wait(header: str | None, asked: float) -> None:
    assert retry_after(throttled(header)) == asked


def test_retry_after_as_an_http_date_is_the_time_until_it() -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True)
    assert 15 <= retry_after(throttled(later)) <= 20
    earlier = format_datetime(datetime.now(UTC) - timedelta(seconds=20), usegmt=True)
    assert retry_after(throttled(earlier)) == 0.0


def test_the_wait_is_the_longer_of_backoff_and_retry_after_capped() -> None:
    assert wait(0.3, throttled(None)) == 0.3
    assert wait(0.3, throttled("2")) == 2.0
    assert wait(4.0, throttled("2")) == 4.0
    assert wait(0.3, throttled("3600")) == BACKOFF_MAX
    assert wait(0.3, requests.ConnectionError("reset")) == 0.3  # no answer, nothing asked

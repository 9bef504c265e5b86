"""A loopback proxy in front of moto that throttles like EC2.

moto has no throttling of its own. This proxy answers a chosen share of the
requests for one EC2 action with the error EC2 sends when a caller is over
its request rate (HTTP 503, `RequestLimitExceeded`, EC2's XML error shape)
and forwards everything else to moto unchanged.
"""

from __future__ import annotations

import http.client
import random
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from loopback_server import serving

REQUEST_LIMIT_EXCEEDED = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b"<Response><Errors><Error><Code>RequestLimitExceeded</Code>"
    b"<Message>Request limit exceeded.</Message></Error></Errors>"
    b"<RequestID>5b0c2e1f-0000-4000-8000-000000000000</RequestID></Response>"
)


@dataclass
class Throttling:
    action: str  # e.g. DescribeInstances
    share: float = 0.0  # of its requests, at random (seeded)
    first: int = 0  # and the first N of them, always
    # Seconds each throttled answer is held before it is sent: time a caller's deadline
    # passes in, by the proxy's sleep (at least this long), never by a test's clock.
    hold: float = 0.0
    seed: int = 0
    counts: Counter[str] = field(default_factory=Counter)  # "throttled", "forwarded"
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _random: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def throttle(self, action: str) -> bool:
        with self._lock:
            if action != self.action:
                return False
            seen = self.counts[f"{action} requests"]
            self.counts[f"{action} requests"] += 1
            hit = seen < self.first or self._random.random() < self.share
            self.counts["throttled" if hit else "forwarded"] += 1
            return hit


@contextmanager
def throttling_proxy(moto_endpoint: str, throttling: Throttling) -> Iterator[str]:
    target = urlsplit(moto_endpoint)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = (
            True  # headers and body are two writes: no 40 ms delayed-ACK stall
        )

        def _relay(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            action = (parse_qs(body.decode("utf-8", "replace")).get("Action") or [""])[0]
            if throttling.throttle(action):
                time.sleep(throttling.hold)
                self._answer(503, {"Content-Type": "text/xml"}, REQUEST_LIMIT_EXCEEDED)
                return
            upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
            try:
                upstream.request(self.command, self.path, body, dict(self.headers.items()))
                answer = upstream.getresponse()
                content = answer.read()
                headers = {
                    k: v
                    for k, v in answer.getheaders()
                    if k.lower() not in ("content-length", "transfer-encoding", "connection")
                }
                self._answer(answer.status, headers, content)
            finally:
                upstream.close()

        def _answer(self, status: int, headers: dict[str, str], content: bytes) -> None:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        do_GET = do_POST = _relay

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serving(Handler) as url:
        yield url

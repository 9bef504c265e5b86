"""A loopback HTTP proxy in front of moto that answers chosen calls the way AWS does.

moto lets every AssumeRole succeed, every region answer, and enables every
region in every account. To test an account that cannot be entered, a region
that cannot be read and accounts with different enabled (opt-in) regions,
this proxy answers those calls itself, with AWS's real documents (STS
`AccessDenied`, EC2 `UnauthorizedOperation`, `DescribeRegionsResponse`), and
forwards everything else to moto unchanged. It learns which access key belongs to which account from
the AssumeRole answers it forwards, and reads the region from the request's
SigV4 credential scope. It refuses the deletes AWS refuses and moto carries out (an
attached interface, an associated address, a group in use, a protected load balancer:
aws_delete_refusals.py), from moto's state read just before, counted in `refused`.
"""

from __future__ import annotations

import http.client
import re
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from aws_delete_refusals import refusal

_SCOPE = re.compile(r"Credential=([^/]+)/\d+/([^/]+)/([^/]+)/")
_ROLE_ACCOUNT = re.compile(r"arn:aws:iam::(\d{12}):role/")

STS_ACCESS_DENIED = """<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <Error><Type>Sender</Type><Code>AccessDenied</Code>
    <Message>User: arn:aws:iam::123456789012:user/auditor is not authorized to perform:
 sts:AssumeRole on resource: {arn}</Message></Error>
  <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>
</ErrorResponse>"""
EC2_UNAUTHORIZED = """<?xml version="1.0" encoding="UTF-8"?>
<Response><Errors><Error><Code>UnauthorizedOperation</Code>
<Message>You are not authorized to perform this operation.</Message></Error></Errors>
<RequestID>59dbff89-35bd-4eac-99ed-be587EXAMPLE</RequestID></Response>"""
EC2_REGIONS = """<DescribeRegionsResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">
<requestId>59dbff89-35bd-4eac-99ed-be587EXAMPLE</requestId><regionInfo>{items}</regionInfo>
</DescribeRegionsResponse>"""
EC2_REGION = (
    "<item><regionName>{0}</regionName><regionEndpoint>ec2.{0}.amazonaws.com</regionEndpoint>"
    "<optInStatus>opt-in-not-required</optInStatus></item>"
)


@dataclass
class Refusals:
    """What the proxy answers itself, and what it saw."""

    roles_of_accounts: set[str] = field(default_factory=set)  # AssumeRole into these is denied
    regions_of_accounts: set[tuple[str, str]] = field(default_factory=set)  # (account, region)
    regions_enabled: dict[str, list[str]] = field(default_factory=dict)  # account -> regions
    # access key id -> account; moto's own test key is the management account's
    key_accounts: dict[str, str] = field(default_factory=lambda: {"testing": "123456789012"})
    assumed: list[str] = field(default_factory=list)  # every RoleArn asked for
    actions: Counter[str] = field(default_factory=Counter)  # every call seen, by Action
    refused: Counter[str] = field(default_factory=Counter)  # the deletes refused, by code
    in_flight: int = 0
    peak_in_flight: int = 0  # the most calls being answered at once: proves a concurrency bound
    lock: threading.Lock = field(default_factory=threading.Lock)

    def enter(self) -> None:
        with self.lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def leave(self) -> None:
        with self.lock:
            self.in_flight -= 1


class _Handler(BaseHTTPRequestHandler):
    server: _ProxyServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

    def do_POST(self) -> None:
        self.server.refusals.enter()
        try:
            self._serve()
        finally:
            self.server.refusals.leave()

    def _serve(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        form = {k: v[0] for k, v in parse_qs(body.decode(errors="replace")).items()}
        scope = _SCOPE.search(self.headers.get("Authorization", ""))
        key, region = (scope.group(1), scope.group(2)) if scope else ("", "")
        refusals = self.server.refusals
        action = form.get("Action", "")
        with refusals.lock:
            refusals.actions[action or self.headers.get("X-Amz-Target", "")] += 1
        if action == "AssumeRole":
            arn = form.get("RoleArn", "")
            with refusals.lock:
                refusals.assumed.append(arn)
            found = _ROLE_ACCOUNT.search(arn)
            if found and found.group(1) in refusals.roles_of_accounts:
                self._answer(403, STS_ACCESS_DENIED.format(arn=arn).encode())
                return
        with refusals.lock:
            account = refusals.key_accounts.get(key, "")
        if action == "DescribeInstances" and (account, region) in refusals.regions_of_accounts:
            self._answer(403, EC2_UNAUTHORIZED.encode())
            return
        if action == "DescribeRegions" and account in refusals.regions_enabled:
            items = "".join(EC2_REGION.format(r) for r in refusals.regions_enabled[account])
            self._answer(200, EC2_REGIONS.format(items=items).encode())
            return
        if refused := refusal(form, lambda query: self._forward(urlencode(query).encode())[2]):
            code, document = refused
            with refusals.lock:
                refusals.refused[code] += 1
            self._answer(400, document)
            return
        status, headers, answer = self._forward(body)
        if action == "AssumeRole" and status == 200:
            issued = re.search(rb"<AccessKeyId>([^<]+)</AccessKeyId>", answer)
            owner = _ROLE_ACCOUNT.search(form.get("RoleArn", ""))
            if issued and owner:
                with refusals.lock:
                    refusals.key_accounts[issued.group(1).decode()] = owner.group(1)
        self._answer(status, answer, headers)

    def _forward(self, body: bytes) -> tuple[int, dict[str, str], bytes]:
        upstream = http.client.HTTPConnection(self.server.upstream, timeout=30)
        try:
            # The caller's headers (its credential scope names the service and the account
            # moto answers for), with the length of this body: a query of the proxy's own
            # (aws_delete_refusals) is sent as the caller.
            headers = {k: v for k, v in self.headers.items() if k.lower() != "content-length"}
            upstream.request("POST", self.path, body, headers)
            response = upstream.getresponse()
            headers = {k: v for k, v in response.getheaders() if k.lower() == "content-type"}
            return response.status, headers, response.read()
        finally:
            upstream.close()

    def _answer(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {"Content-Type": "text/xml"}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, upstream: str, refusals: Refusals) -> None:
        self.upstream = upstream
        self.refusals = refusals
        super().__init__(("127.0.0.1", 0), _Handler)


@contextmanager
def refusing_proxy(moto_endpoint: str) -> Iterator[tuple[str, Refusals]]:
    refusals = Refusals()
    server = _ProxyServer(urlsplit(moto_endpoint).netloc, refusals)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", refusals
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

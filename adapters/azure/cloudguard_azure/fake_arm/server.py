"""The fake ARM over HTTPS on 127.0.0.1, for tests, the demo and benchmarks.

HTTPS because azure-core's BearerTokenCredentialPolicy refuses to send a
token over plain HTTP; a throwaway `trustme` CA signs the certificate and
its PEM is handed to the SDK as `connection_verify`. Port 0, so parallel
test workers never collide. One thread per connection, with the TLS
handshake done in that thread, so a slow client never stalls the others.
"""

from __future__ import annotations

import math
import shutil
import ssl
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from cloudguard_azure.fake_arm import routing
from cloudguard_azure.fake_arm.authorization import urls as _authorization  # noqa: F401
from cloudguard_azure.fake_arm.compute import urls as _compute  # noqa: F401
from cloudguard_azure.fake_arm.credential import StaticTokenCredential
from cloudguard_azure.fake_arm.faults import Faults
from cloudguard_azure.fake_arm.network import urls as _network  # noqa: F401
from cloudguard_azure.fake_arm.resourcegraph import urls as _resourcegraph  # noqa: F401
from cloudguard_azure.fake_arm.resources import urls as _resources  # noqa: F401
from cloudguard_azure.fake_arm.retailprices import urls as _retailprices  # noqa: F401
from cloudguard_azure.fake_arm.routing import Context, Request, Response, arm_error
from cloudguard_azure.fake_arm.state import ArmState

_CHALLENGE = (
    'Bearer authorization_uri="https://login.microsoftonline.com/common", '
    'error="invalid_token", '
    'error_description="The authentication failed because of missing '
    "'Authorization' header.\""
)
# What ARM says along with each injected status: (error code, message).
_INJECTED = {
    401: (
        "InvalidAuthenticationTokenTenant",
        "The access token is from the wrong issuer. It must match the tenant "
        "associated with this subscription.",
    ),
    403: (
        "AuthorizationFailed",
        "The client 'fake-principal' does not have authorization to perform this action "
        "or the scope is invalid.",
    ),
    429: (
        "TooManyRequests",
        "The request is being throttled as the limit has been reached for operation type - Read.",
    ),
    500: ("InternalServerError", "Encountered internal server error."),
    502: ("BadGateway", "The gateway did not receive a response in time."),
    503: ("ServiceUnavailable", "The service is temporarily unavailable."),
}


def handle(
    ctx: Context, method: str, raw_path: str, headers: Any, host: str, body: bytes = b""
) -> Response:
    """Answer one request: count it, delay it, check auth, apply faults, route it."""
    split = urlsplit(raw_path)
    path = unquote(split.path)
    query = {k.casefold(): v for k, v in parse_qsl(split.query, keep_blank_values=True)}
    resolved = routing.resolve(method, path)
    ctx.faults.count(f"{method} {resolved[0] if resolved else 'unrouted'}")
    target = unquote(raw_path)  # path and query: a fault can name one page ($skiptoken=50)
    ctx.faults.record(method, target)
    if delay := ctx.faults.latency + ctx.faults.delay_for(target):
        time.sleep(delay)

    auth = headers.get("Authorization", "")
    anonymous = resolved is not None and resolved[0] in routing.ANONYMOUS
    if not anonymous and (not auth.startswith("Bearer ") or not auth[len("Bearer ") :].strip()):
        response = arm_error(
            401,
            "AuthenticationFailed",
            "Authentication failed. The 'Authorization' header is missing.",
        )
        response.headers["WWW-Authenticate"] = _CHALLENGE
        return response
    if "api-version" not in query:
        return arm_error(
            400,
            "MissingApiVersionParameter",
            "The api-version query parameter (?api-version=) is required for all requests.",
        )
    if rule := ctx.faults.take_rule(target, method):
        code, message = _INJECTED.get(rule.status, _INJECTED[500])
        response = arm_error(rule.status, code, message)
        if rule.status == 401:
            response.headers["WWW-Authenticate"] = _CHALLENGE
        if rule.retry_after is not None and float(rule.retry_after).is_integer():
            response.headers["Retry-After"] = str(int(rule.retry_after))
        elif rule.retry_after is not None:
            # Sub-second waits (test-sized) go in the millisecond form azure-core also reads.
            response.headers["retry-after-ms"] = str(round(rule.retry_after * 1000))
        return response
    parts = path.split("/")
    if len(parts) > 2 and parts[1].casefold() == "subscriptions":
        sub = parts[2]
        if sub.casefold() in ctx.faults.forbidden:
            return arm_error(
                403,
                "AuthorizationFailed",
                "The client 'fake-principal' with object id "
                "'00000000-0000-0000-0000-000000000000' "
                "does not have authorization to perform action "
                f"'Microsoft.Compute/virtualMachines/read' over scope '/subscriptions/{sub}' "
                f"or the scope is invalid. If access was recently granted, please refresh "
                f"your credentials.",
            )
    if resolved is None:
        return arm_error(404, "NotFound", f"No route for {method} {path} in the fake ARM.")
    if method == "GET" and ctx.state.take_settling(path):
        name = path.rstrip("/").rsplit("/", 1)[-1]
        return arm_error(404, "ResourceNotFound", f"The Resource '{name}' was not found.")
    _, handler, params = resolved
    request = Request(method, path, query, f"https://{host}", body)
    with ctx.state.lock:  # state reads and LRO transitions see one consistent world
        return handler(ctx, request, **params)


def _scope(raw_path: str) -> str:
    """Whose quota a request draws on: its subscription, or the tenant's ("")."""
    parts = urlsplit(raw_path).path.split("/")
    return parts[2].casefold() if len(parts) > 2 and parts[1].casefold() == "subscriptions" else ""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the SDK's connection pool reuses sockets
    timeout = 30  # an idle keep-alive connection does not hold its thread forever
    # Headers and body go out as two writes (two TLS records): with Nagle's algorithm the
    # body waits for the client's delayed ACK of the headers, 40 ms a request on Linux.
    disable_nagle_algorithm = True
    server: _TlsServer

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        faults = self.server.ctx.faults
        faults.enter()
        try:
            # ARM counts (and throttles) a read before anything else looks at it.
            quota, wait = faults.take_quota(_scope(self.path))
            if wait is not None:
                faults.count(f"{self.command} throttled (quota)")  # a request all the same
                faults.record(self.command, unquote(self.path))
                code, message = _INJECTED[429]
                response = arm_error(429, code, message)
                response.headers["Retry-After"] = str(max(1, math.ceil(wait)))
            else:
                response = handle(
                    self.server.ctx,
                    self.command,
                    self.path,
                    self.headers,
                    self.headers.get("Host", ""),
                    body,
                )
        finally:
            faults.leave()
        cut = response.status == 200 and bool(response.body) and faults.take_cut(unquote(self.path))
        faults.answer("reset" if cut else str(response.status))
        self.send_response(response.status)
        request_id = str(uuid.uuid4())
        self.send_header("x-ms-request-id", request_id)
        self.send_header("x-ms-correlation-request-id", request_id)
        for name, value in {**quota, **response.headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        if cut:
            # A connection reset mid-page: the promised length never arrives.
            self.wfile.write(response.body[: len(response.body) // 2])
            self.wfile.flush()
            self.close_connection = True
        elif response.body:
            self.wfile.write(response.body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the request counter is the record; stderr noise would drown test output


class _TlsServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, ctx: Context, tls: ssl.SSLContext) -> None:
        self.ctx = ctx
        self.tls = tls
        super().__init__(("127.0.0.1", 0), _Handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        try:
            conn = self.tls.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return  # a client that gave up mid-handshake (or distrusts our CA)
        try:
            _Handler(conn, client_address, self)
        except (ssl.SSLError, ConnectionError, TimeoutError):
            pass
        finally:
            conn.close()


@dataclass
class FakeArm:
    """A running fake: where it listens, how to trust it, and its state and faults."""

    base_url: str
    ca_pem: str
    state: ArmState
    faults: Faults

    def credential(self) -> StaticTokenCredential:
        return StaticTokenCredential()


class FakeArmUnavailable(RuntimeError):
    """The fake ARM cannot start: the `fake` extra (trustme) is not installed."""


@contextmanager
def serve(state: ArmState | None = None, faults: Faults | None = None) -> Iterator[FakeArm]:
    """Run a fake ARM for the duration of the block; its temp CA files are removed after."""
    try:
        import trustme  # a test/demo dependency: the `fake` extra, never a runtime one
    except ImportError as exc:
        raise FakeArmUnavailable(
            "the fake ARM needs a throwaway TLS CA (trustme), which only the `fake` extra "
            "installs: pip install 'cloudguard-azure[fake]'"
        ) from exc

    state = state or ArmState()
    faults = faults or Faults()
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    cert.configure_cert(tls)
    workdir = Path(tempfile.mkdtemp(prefix="cloudguard-fake-arm-"))
    server: _TlsServer | None = None
    thread: threading.Thread | None = None
    try:
        ca_pem = workdir / "ca.pem"
        ca.cert_pem.write_to_path(str(ca_pem))
        server = _TlsServer(Context(state, faults), tls)
        thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        thread.start()
        port = server.server_address[1]
        yield FakeArm(f"https://127.0.0.1:{port}", str(ca_pem), state, faults)
    finally:
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None:
            thread.join(timeout=5)
        shutil.rmtree(workdir, ignore_errors=True)

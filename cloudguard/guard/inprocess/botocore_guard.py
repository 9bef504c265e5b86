"""botocore: name each AWS call for the socket guard; refuse nothing here.

Two hooks, both on classes, so they reach every session and client, those
created before the guard was installed included:

- `BaseClient._make_api_call`: the logical call (service and operation, for
  the client and the resource APIs alike); botocore's retries happen inside
  it, so a refusal is recorded once per call;
- `URLLib3Session.send`: the URL about to be sent, also for the credential
  providers' own fetches (IMDS, container credentials, SSO), which make no
  API call.

The decision is made at the socket (`socket_guard`). moto, `Stubber` and
placebo answer at botocore's events and vcrpy swaps the connection class, so
their calls never reach a socket and are never recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from cloudguard.guard.inprocess import patches
from cloudguard.guard.inprocess.attempt import Attempt, current
from cloudguard.guard.inprocess.declared import BOTOCORE
from cloudguard.guard.inprocess.refusal import CloudReachRefused


def patch_client(module: ModuleType) -> None:
    patches.swap(module.BaseClient, "_make_api_call", _named_call)


def patch(module: ModuleType) -> None:
    patches.swap(module.URLLib3Session, "send", _named_send)


def _named_call(original: Callable[..., Any]) -> Callable[..., Any]:
    def _make_api_call(self: Any, operation_name: str, api_params: Any) -> Any:
        __tracebackhide__ = True  # cloudguard's own frames: pytest leaves them out of tracebacks
        try:
            service = str(self.meta.service_model.service_name)
        except AttributeError:
            service = ""
        attempt = Attempt(BOTOCORE, service=service, operation=str(operation_name))
        attempt.parent = current.get()  # an STS call made to refresh another call's credentials
        token = current.set(attempt)
        try:
            return original(self, operation_name, api_params)
        finally:
            current.reset(token)

    return _make_api_call


def _named_send(original: Callable[..., Any]) -> Callable[..., Any]:
    from botocore.exceptions import HTTPClientError

    def send(self: Any, request: Any) -> Any:
        __tracebackhide__ = True
        parts = urlsplit(str(request.url))
        shown = f"{parts.scheme}://{parts.netloc}{parts.path}"  # a presigned query is a credential
        attempt = current.get()
        token = None
        if attempt is None or attempt.guard is not BOTOCORE:
            # No API call under way: a credential provider's own fetch (IMDS, container).
            attempt = Attempt(BOTOCORE, service="credentials", parent=attempt)
            token = current.set(attempt)
        attempt.method, attempt.url = str(request.method), shown
        try:
            return original(self, request)
        except HTTPClientError as error:
            # botocore wraps every unknown exception; hand the refusal on as itself, once.
            refused = error.kwargs.get("error")
            if isinstance(refused, CloudReachRefused):
                raise refused from None
            raise
        finally:
            if token is not None:
                current.reset(token)

    return send

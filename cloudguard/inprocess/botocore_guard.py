"""botocore: refuse at `URLLib3Session.send`, the one door every AWS request walks through.

Why there and not at the `before-send` event: an event handler registered
now reaches only clients created afterwards, while a method on the class
reaches every session and client, those made before the guard included, and
the credential providers' own metadata fetches (IMDS, ECS container
credentials), which use the same class. moto's `@mock_aws` answers requests
at `before-send`, so they never get here: mocked tests stay untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from cloudguard.inprocess import hosts, patches
from cloudguard.inprocess.refusal import refuse


def patch(module: ModuleType) -> None:
    patches.swap(module.URLLib3Session, "send", _guarded_send)


def _guarded_send(original: Callable[..., Any]) -> Callable[..., Any]:
    def send(self: Any, request: Any) -> Any:
        url = str(request.url)
        parts = urlsplit(url)
        if not hosts.is_loopback(parts.hostname):
            # The query string of a presigned URL is a credential: never record it.
            shown = f"{parts.scheme}://{parts.netloc}{parts.path}"
            refuse(
                via="botocore",
                target=parts.hostname or url,
                argv=[str(request.method), shown],
                what=f"an AWS request {request.method} {shown}",
            )
        return original(self, request)

    return send

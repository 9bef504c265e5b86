"""A credential for the fake ARM: a fixed bearer token, no identity involved.

The fake accepts any bearer token, so tests and the demo pass this one
explicitly and no ambient identity (az login, managed identity, env
secrets) is ever consulted.
"""

from __future__ import annotations

import time
from typing import Any


class StaticTokenCredential:
    """Implements azure-core's TokenCredential protocol (`get_token`)."""

    def __init__(self, token: str = "fake-arm-token") -> None:
        self.token = token
        self.scopes_requested: list[tuple[str, ...]] = []

    def get_token(self, *scopes: str, **kwargs: Any) -> Any:
        from azure.core.credentials import AccessToken

        self.scopes_requested.append(scopes)
        return AccessToken(self.token, int(time.time()) + 3600)

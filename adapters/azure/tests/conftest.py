"""Fixtures for the Azure adapter tests: a fake ARM over TLS on 127.0.0.1, real SDK clients."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cloudguard_azure.fake_arm import FakeArm, serve


@pytest.fixture
def arm() -> Iterator[FakeArm]:
    with serve() as fake:
        yield fake

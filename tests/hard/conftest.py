"""The hard seal's tests run here in CI. A host that cannot make namespaces skips them only by
declaring so: HARD_SEAL_TESTS_HOST_LACKS names the absent capability (e.g. `user-namespaces`,
`tun`, `iproute2`), and every skip prints it. Nothing is probed: a probe is false on a broken
host too, and would turn a regression into a silent skip.
"""

from __future__ import annotations

import os

import pytest

LACKS_VARIABLE = "HARD_SEAL_TESTS_HOST_LACKS"


@pytest.fixture(autouse=True)
def _hard_seal_host() -> None:
    declared = os.environ.get(LACKS_VARIABLE, "").strip()
    if declared:
        pytest.skip(f"this host declares it lacks {declared} ({LACKS_VARIABLE}={declared})")

"""What a host declares it lacks, by name: the only way a test that needs a tool may skip.

A test never probes its way to a skip (`command -v cc` is false on a broken host
too, and would turn a regression into a quiet skip). A tool the suite needs is
installed by `python3 dev.py test` (its system packages); where it is missing,
the test fails naming it, unless the host says so itself:
`TESTS_HOST_LACKS=chromium,static-c,second-uid` (as tests/hard/conftest.py's
HARD_SEAL_TESTS_HOST_LACKS does for the hard seal).
"""

from __future__ import annotations

import os

import pytest

VARIABLE = "TESTS_HOST_LACKS"


def declared(what: str) -> bool:
    return what in {name.strip() for name in os.environ.get(VARIABLE, "").split(",")}


def require(what: str, missing: str | None) -> None:
    """Skip when the host declares it lacks `what`; fail naming `missing` (why and the fix)."""
    if declared(what):
        pytest.skip(f"this host declares it lacks {what} ({VARIABLE}={what})")
    if missing:
        pytest.fail(f"{missing} (or declare it: {VARIABLE}={what})", pytrace=False)

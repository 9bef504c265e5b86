"""Fixtures for the auditor's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from headless_chromium import Browser, chromium_binary
from host_lacks import require


@pytest.fixture(autouse=True)
def _no_ambient_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `cloudguard audit` looks for cloudguard.toml in the working directory and
    # its parents; run every test in its own directory so the project's (or a
    # neighbour test's) config never applies.
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """Headless Chromium, one per test module (the HTML report tests).

    Not probed to decide a skip: missing, it fails naming it, unless the host declares
    `TESTS_HOST_LACKS=chromium` (tests/host_lacks.py). A host without `unshare -rn` fails
    in Browser, naming it."""
    binary = chromium_binary()
    require("chromium", None if binary else "chromium is not installed (dev.py test installs it)")
    assert binary is not None
    opened = Browser(binary, tmp_path_factory.mktemp("chromium-profile"))
    yield opened
    opened.close()

"""Fixtures for the auditor's tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from headless_chromium import Browser, can_unshare_network, chromium_binary


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
    """Headless Chromium, one per test module (the HTML report tests)."""
    binary = chromium_binary()
    missing = None if binary else "chromium is not installed (.ci/run installs it)"
    if binary and not can_unshare_network():
        missing = "unprivileged network namespaces (unshare -rn) are not available"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(missing)  # CI installs it: its absence there is a failure
        pytest.skip(missing)
    assert binary is not None
    opened = Browser(binary, tmp_path_factory.mktemp("chromium-profile"))
    yield opened
    opened.close()

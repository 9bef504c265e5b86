"""Fixtures for the reaper's tests."""

from __future__ import annotations

from pathlib import Path

import pytest
import reap_fake_adapter


@pytest.fixture(autouse=True)
def _own_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # The default reap log goes to the working directory, and `reap apply` reads
    # cloudguard.toml from it or a parent: each test gets its own, empty one.
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    reap_fake_adapter.reset()
    return work

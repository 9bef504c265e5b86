"""Fixtures for the auditor's tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _no_ambient_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `cloudguard audit` looks for cloudguard.toml in the working directory and
    # its parents; run every test in its own directory so the project's (or a
    # neighbour test's) config never applies.
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)

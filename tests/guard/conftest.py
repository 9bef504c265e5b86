"""Fixtures for the guard's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from cloudguard.guard import alarm


@pytest.fixture
def armed_log(tmp_path: Path) -> Path:
    log = tmp_path / "reach.jsonl"
    alarm.arm(str(log), by="test")
    return log

"""Fixtures for the reaper's tests."""

from __future__ import annotations

from pathlib import Path

import pytest
import reap_fake_adapter
from reap_helpers import SUB
from trusted_config import write_trusted


@pytest.fixture(autouse=True)
def _own_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # The default reap log goes to the working directory, and `reap apply` reads
    # cloudguard.toml from it or a parent: each test gets its own, empty one.
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    # Locks of this test's own: parallel tests (and other checkouts) never share one; and
    # the accounts `apply --yes` may act in: the fleet's.
    (tmp_path / "run").mkdir(mode=0o700)
    write_trusted(
        work / "cloudguard.toml",
        f'[reap]\naccounts = ["{SUB}", "123456789012"]\nlock-directory = "{tmp_path / "run"}"\n',
    )
    reap_fake_adapter.reset()
    return work

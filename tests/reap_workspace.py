"""What `reap apply --yes` needs, a test's own: a working directory whose cloudguard.toml
lists the accounts in `[reap] accounts` with a lock directory of the test's, and an empty
controller home. The adapters' reaper tests share it."""

from __future__ import annotations

from pathlib import Path

import pytest
from trusted_config import write_trusted


def reap_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, account: str
) -> tuple[Path, Path]:
    """(the working directory, now the current one; the controller home)."""
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    (tmp_path / "run").mkdir(mode=0o700)  # this test's own locks
    write_trusted(
        work / "cloudguard.toml",
        f'[reap]\naccounts = ["{account}"]\nlock-directory = "{tmp_path / "run"}"\n',
    )
    home = tmp_path / "controller"
    for folder in ("state", "queue", "workers"):
        (home / folder).mkdir(parents=True)
    return work, home

"""Fixtures for the plugin's tests: inner pytest runs, fenced off from the network."""

from __future__ import annotations

from pathlib import Path

import pytest

from cloudguard import reach, seal


def pytest_configure(config: pytest.Config) -> None:
    # `pytest_plugins` is refused outside the rootdir's conftest; this works from here,
    # whether the suite runs alone or from the repository root (or with `-p pytester`).
    if not config.pluginmanager.has_plugin("pytester"):
        config.pluginmanager.import_plugin("pytester")


FENCE = Path(__file__).with_name("fence")


@pytest.fixture
def fenced(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A pytester whose runs start unsealed (their own seal, log, summary) behind the fence.

    The outer session's seal and log (when this suite itself runs under cloudguard)
    are removed from the inner runs' environment, so an inner reach is judged by
    the inner session alone; PYTHONPATH is the fence only, so the inner processes
    start with the fence beneath everything and no outer guard.
    """
    for name in (reach.LOG_VARIABLE, seal.SEAL_DIR_VARIABLE, reach.TEST_VARIABLE):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    monkeypatch.setenv("PYTHONPATH", str(FENCE))
    return pytester

"""Fixtures for the plugin's tests: inner pytest runs, fenced off from the network."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cloudguard.guard import reach, seal


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
    the inner session alone; PYTHONPATH starts with the fence and loses the outer
    guards' sitecustomize, so the inner processes start with the fence beneath
    everything and no outer guard (a negative control's package copy stays on it).
    """
    for name in (
        reach.LOG_VARIABLE,
        reach.KEEPER_VARIABLE,
        seal.SEAL_DIR_VARIABLE,
        seal.KEPT_VARIABLE,
        reach.TEST_VARIABLE,
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    # pytest prints each failure's message whole in its short summary on a CI host (`CI` or
    # `BUILD_NUMBER` set): the inner runs read the same here and on CI; a test sets it itself.
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BUILD_NUMBER", raising=False)
    kept = [
        entry
        for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep)
        if entry and entry != str(seal.SITECUSTOMIZE_DIR)
    ]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(FENCE), *kept]))
    return pytester

"""cloudguard's pytest plugin: the hooks pytest calls. Thin: each role is its own module.

Enabled by `--cloudguard`, by `cloudguard = true` in the pytest ini settings,
or by running under `cloudguard run` (then the run's seal and log are used).
When enabled, before the first test:

- `os.environ` is sealed exactly as `cloudguard run` seals a process (same
  registry, the project's cloudguard.toml included, same single seal line),
  so every subprocess gets the refusing shims, provider and sitecustomize
  (`early`: before pytest-env and the conftest files declare the suite's own);
- a reach log is armed (`--cloudguard-log PATH`, else a temporary file kept
  when the session is red);
- the in-process guards (botocore, azure-core, sockets) are installed.

Then each test runs with `CLOUDGUARD_TEST=<nodeid>` and is failed for every
reach recorded in its name (`session_guard`, by the one rule of `roles`); the
session exits 98 when any unexpected reach was recorded.

There is no marker, option or variable that lets a test reach a cloud. A
project whose configuration file declares the plugin is never off unsaid
(`switch`): off by its own file, one line says so; turned off by an override
(`-o cloudguard=false`, PYTEST_ADDOPTS) where the file requires it, the
session stops before any conftest is imported (usage error, 4).
"""

from __future__ import annotations

import os
from collections.abc import Generator, Mapping

import pytest

from cloudguard import exit_codes
from cloudguard.documents import reach_log
from cloudguard.guard import reach, seal, seal_registry
from cloudguard.guard.pytest import early, switch, where
from cloudguard.guard.pytest.fixture import cloudguard
from cloudguard.guard.pytest.session_guard import GUARD, SessionGuard

__all__ = [
    "cloudguard",
    "pytest_addoption",
    "pytest_configure",
    "pytest_load_initial_conftests",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cloudguard", "cloudguard: seal the session, fail tests that reach")
    group.addoption(
        "--cloudguard",
        action="store_true",
        default=False,
        help="Seal the session and fail every test that reaches a real cloud.",
    )
    group.addoption(
        "--cloudguard-log",
        metavar="PATH",
        default=None,
        help="Reach log to arm (default: a temporary file, kept when the session is red).",
    )
    group.addoption(
        "--cloudguard-report",
        action="append",
        metavar="FORMAT=FILE",
        default=[],
        help="Also write the session's findings as FORMAT to FILE (repeatable): json, junit, "
        "markdown (a CI job summary), sarif (code scanning, at each test's file and line).",
    )
    parser.addini(
        "cloudguard", type="bool", default=False, help="Enable cloudguard (as --cloudguard)."
    )


def _under_seal(environ: Mapping[str, str]) -> bool:
    """Running under `cloudguard run`, or an xdist worker of a sealed controller."""
    return bool(environ.get(reach.LOG_VARIABLE) and environ.get(seal.SEAL_DIR_VARIABLE))


def _enabled(config: pytest.Config) -> bool:
    early_options = getattr(config, "known_args_namespace", None)
    return bool(
        config.getoption("cloudguard", False)
        or getattr(early_options, "cloudguard", False)
        or config.getini("cloudguard")
        or _under_seal(os.environ)
    )


# Seal only the ambient. A wrapper runs around every other implementation, pytest-env's
# tryfirst one included, so the seal is made before pytest-env applies the suite's `env =`
# and before the initial conftest.py files are imported: what the suite declares is the
# suite's own and survives (listed as kept); what the shell gave the session is dropped.
@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> Generator[None, None, None]:
    if _enabled(early_config):
        made = early.seal_before_the_suite(early_config)
    else:  # never off unsaid: a project that declares the plugin hears it, or stops (4)
        made = None
        switch.judge_off(early_config)
    try:
        return (yield)
    finally:
        if made is not None:
            made.announce()  # the suite's own settings are known now: print the seal line


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if not _enabled(config):
        return
    try:
        early.raise_refusal(config)
        guard = SessionGuard.begin(config)
    except BaseException as error:
        made = config.stash.get(early.EARLY, None)
        if made is not None:  # sealed before the conftests, and no session will close it now
            made.abandon(config)
        if isinstance(error, (seal_registry.RegistryError, reach_log.ReachLogError, OSError)):
            pytest.exit(
                f"cloudguard: refused admission: {error}", returncode=exit_codes.REFUSED_ADMISSION
            )
        raise
    config.stash[GUARD] = guard
    config.pluginmanager.register(guard, "cloudguard-session")
    config.pluginmanager.register(where.Whereabouts(), "cloudguard-whereabouts")

"""Compatibility: the pytest plugin under its former module name.

The plugin lives in `cloudguard.guard.pytest` (the `pytest11` entry point
`cloudguard` names `cloudguard.guard.pytest.plugin`). This module re-exports
its hooks and its fixture, so `pytest -p cloudguard.pytest_plugin` (with
plugin autoloading off) keeps working. See docs/pytest.md.
"""

from cloudguard.guard.pytest.plugin import (
    cloudguard,
    pytest_addoption,
    pytest_configure,
    pytest_load_initial_conftests,
)

__all__ = [
    "cloudguard",
    "pytest_addoption",
    "pytest_configure",
    "pytest_load_initial_conftests",
]

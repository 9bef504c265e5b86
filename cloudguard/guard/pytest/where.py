"""Where in the session a reach happens: collection, the test's file and line, the fixture.

A reach made in a class's setup is made while pytest sets up whichever test
of the class runs first, and one in a session fixture while the first test
that asks for it does: the record names that test. These say the rest, so a
person (and a report) can tell a test's own reach from its class's or its
fixture's:

- `CLOUDGUARD_PHASE=collection` while the suite's files are imported (the
  test phases are pytest's own, read from `PYTEST_CURRENT_TEST`);
- `CLOUDGUARD_LOCATION`: the running test's `FILE:LINE` (during collection,
  the file or directory being collected);
- `CLOUDGUARD_FIXTURE`: the fixture being set up or torn down, with a
  class's or module's setup named as written (`DeploymentUnitsTest.setUpClass`).

They are environment variables, as `CLOUDGUARD_TEST` is, so a subprocess a
fixture starts records them too (`cloudguard.guard.reach.whereabouts` reads
them). Set only when the plugin runs: a suite without fixtures pays nothing.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Generator
from typing import Any

import pytest

from cloudguard.guard.reach import FIXTURE_VARIABLE, LOCATION_VARIABLE, PHASE_VARIABLE

COLLECTION = "collection"

# The fixtures pytest makes for xunit-style and unittest setups, by name prefix: what their
# setup and their teardown are called where the suite wrote them.
_GENERATED = (
    ("_unittest_setUpClass_fixture_", "{}.setUpClass", "{}.tearDownClass"),
    ("_unittest_setup_method_fixture_", "{}.setup_method", "{}.teardown_method"),
    ("_xunit_setup_class_fixture_", "{}.setup_class", "{}.teardown_class"),
    ("_xunit_setup_method_fixture_", "{}.setup_method", "{}.teardown_method"),
    ("_xunit_setup_module_fixture_", "setup_module of {}", "teardown_module of {}"),
    ("_xunit_setup_function_fixture_", "setup_function of {}", "teardown_function of {}"),
)


def fixture_names(argname: str, scope: str) -> tuple[str, str]:
    """What a fixture's setup and its teardown are called in a record."""
    if argname.startswith("_"):
        for prefix, setup, teardown in _GENERATED:
            if argname.startswith(prefix):
                owner = argname[len(prefix) :]
                return setup.format(owner), teardown.format(owner)
    name = argname if scope == "function" else f"{argname} ({scope} scope)"
    return name, name


def location(place: tuple[str, int | None, str]) -> str:
    """`FILE:LINE` of a test (FILE relative to the rootdir, LINE 1-based) from pytest's own
    `location` of an item or a report: (file, 0-based line, name)."""
    path, line, _ = place
    return path if line is None else f"{path}:{line + 1}"


VARIABLES = (PHASE_VARIABLE, FIXTURE_VARIABLE, LOCATION_VARIABLE)


def start_collection() -> dict[str, str | None]:
    """The session starts: nothing inherited from an outer session's test holds here. Returns
    what they were, for `restore` (a session run inside another's test, in its process)."""
    before = {variable: os.environ.get(variable) for variable in VARIABLES}
    os.environ.pop(FIXTURE_VARIABLE, None)
    os.environ.pop(LOCATION_VARIABLE, None)
    os.environ[PHASE_VARIABLE] = COLLECTION
    return before


def restore(before: dict[str, str | None]) -> None:
    for variable, value in before.items():
        _set(variable, value)


def enter_test(item: pytest.Item) -> None:
    os.environ[LOCATION_VARIABLE] = location(item.location)


def leave_test() -> None:
    os.environ.pop(LOCATION_VARIABLE, None)


def _set(variable: str, value: str | None) -> None:
    if value:
        os.environ[variable] = value
    else:
        os.environ.pop(variable, None)


class Whereabouts:
    """The hooks that keep the variables true while the session runs."""

    @pytest.hookimpl(wrapper=True)
    def pytest_collection(self, session: pytest.Session) -> Generator[None, Any, Any]:
        os.environ[PHASE_VARIABLE] = COLLECTION
        try:
            return (yield)
        finally:
            os.environ.pop(PHASE_VARIABLE, None)
            os.environ.pop(LOCATION_VARIABLE, None)

    def pytest_collectstart(self, collector: pytest.Collector) -> None:
        _set(LOCATION_VARIABLE, collector.nodeid.partition("::")[0])

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(
        self, fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
    ) -> Generator[None, Any, Any]:
        setup, teardown = fixture_names(fixturedef.argname, fixturedef.scope)
        outer = os.environ.get(FIXTURE_VARIABLE)  # a fixture set up while another one is
        os.environ[FIXTURE_VARIABLE] = setup
        try:
            return (yield)
        finally:
            _set(FIXTURE_VARIABLE, outer)
            # Added after the fixture's own teardown was registered, so it runs just before
            # it (finalizers run last-in, first-out); pytest_fixture_post_finalizer clears it.
            fixturedef.addfinalizer(functools.partial(_set, FIXTURE_VARIABLE, teardown))

    def pytest_fixture_post_finalizer(self) -> None:
        os.environ.pop(FIXTURE_VARIABLE, None)

"""Which session this is, and which records in the reach log are its to judge.

Every record names the test that made it (`CLOUDGUARD_TEST`), or none when a
child scrubbed its environment. A session that has the log to itself judges
every record, unnamed ones included; a session that shares it with others
(an xdist worker with its siblings, a nested session with the outer session)
takes only records naming one of its own tests, and leaves the rest to
whoever has the whole log. `Attribution.belongs` is that one rule.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping

import pytest

from cloudguard.guard import reach

Record = Mapping[str, object]


class Role(enum.Enum):
    """Which session this is: it decides which records in the reach log are its to judge."""

    PLAIN = "plain"  # runs its tests itself; the log is its own (or its `cloudguard run`'s)
    CONTROLLER = "controller"  # xdist controller: runs no test, judges all its workers wrote
    WORKER = "worker"  # xdist worker: fails its own tests; the controller gives the verdict
    NESTED = "nested"  # started inside another session's test, on that session's log

    @property
    def has_the_whole_log(self) -> bool:
        return self in (Role.PLAIN, Role.CONTROLLER)

    @property
    def gives_the_verdict(self) -> bool:
        """Judges the whole session at its end, exit status and terminal summary."""
        return self is not Role.WORKER

    @classmethod
    def of(cls, config: pytest.Config, *, inherited: bool) -> Role:
        """`inherited`: the session runs under a seal it verified, not one it made."""
        if hasattr(config, "workerinput"):
            return cls.WORKER
        # A test's subprocess inherits its session's seal with the test's name (a worker's
        # subprocess, with the worker's id): it writes to that session's log.
        if inherited and outer_test(os.environ) is not None:
            return cls.NESTED
        if config.getoption("dist", "no") != "no" and not config.getoption("collectonly"):
            return cls.CONTROLLER
        return cls.PLAIN


def outer_test(environ: Mapping[str, str]) -> str | None:
    """The test (or xdist worker) of another session this process runs inside, if any."""
    for variable in (reach.TEST_VARIABLE, "PYTEST_CURRENT_TEST", "PYTEST_XDIST_WORKER"):
        if environ.get(variable):
            return environ[variable]
    return None


class Attribution:
    """A session's role and the tests it knows as its own: the one rule of attribution."""

    def __init__(self, role: Role) -> None:
        self.role = role
        self.own_tests: set[str] = set()  # run here, or (controller) reported by a worker

    def belongs(self, record: Record, test: str | None = None) -> bool:
        """Is `record` this session's to judge: for `test`, or (None) at the session's end?"""
        named = record.get("test")
        if not named:
            return self.role.has_the_whole_log
        if test is not None:
            return named == test
        return self.role.has_the_whole_log or named in self.own_tests

"""Negative control for the nested-session rule (harness: tests/cloudguard_mutants.py).

A pytest session started by another session's test shares that session's log;
it must judge only records naming its own tests, and when it is an xdist
controller those are the tests its workers report. Break either in a copy of
the package and the named test must go red, for that reason.
"""

from __future__ import annotations

from pathlib import Path

from cloudguard_mutants import Mutation, assert_turns_red

NESTED = Mutation(
    name="nested session judges the outer session's records",
    module="guard/pytest/roles.py",
    original="        return self.role.has_the_whole_log or named in self.own_tests\n",
    broken="        return True\n",
    tests=(
        "tests/pytest_plugin/test_plugin_enable.py::"
        "test_a_session_nested_in_another_sessions_test_judges_only_its_own_tests",
    ),
    reason="assert 98 == 0",
)


CONTROLLER_TESTS = Mutation(
    name="a nested xdist controller knows no test of its own",
    module="guard/pytest/session_guard.py",
    original="        self.attribution.own_tests.add(report.nodeid)\n",
    broken="        pass\n",
    tests=(
        "tests/pytest_plugin/test_plugin_enable.py::"
        "test_a_nested_xdist_controller_judges_the_tests_its_workers_ran",
    ),
    reason="assert <ExitCode.TESTS_FAILED: 1> == 98",
)


def test_breaking_the_nested_session_rule_turns_its_test_red(tmp_path: Path) -> None:
    assert_turns_red(tmp_path, NESTED)


def test_breaking_the_nested_controllers_own_tests_turns_its_test_red(tmp_path: Path) -> None:
    assert_turns_red(tmp_path, CONTROLLER_TESTS)

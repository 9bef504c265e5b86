"""Negative controls for the nested-session rule (harness: tests/cloudguard_mutants.py).

A pytest session started by another session's test shares that session's log;
it must judge only records naming its own tests, and when it is an xdist
controller those are the tests its workers report. Break either in a copy of
the package and the named test must go red at its named check.
"""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

ENABLE = "tests/pytest_plugin/test_plugin_enable.py::"
MUTATIONS = [
    Mutation(
        name="nested session judges the outer session's records",
        module="guard/pytest/roles.py",
        original="        return self.role.has_the_whole_log or named in self.own_tests\n",
        broken="        return True\n",
        tests=(
            f"{ENABLE}test_a_session_nested_in_another_sessions_test_judges_only_its_own_tests",
        ),
        check="a-nested-session-judges-only-its-own-tests",
    ),
    Mutation(
        name="a nested xdist controller knows no test of its own",
        module="guard/pytest/session_guard.py",
        original="        self.attribution.own_tests.add(report.nodeid)\n",
        broken="        pass\n",
        tests=(f"{ENABLE}test_a_nested_xdist_controller_judges_the_tests_its_workers_ran",),
        check="the-controller-judges-its-workers-tests",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_a_nested_session_rule_turns_its_test_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)

"""Negative controls for the nested-session rule and the project's switch (harness:
tests/cloudguard_mutants.py).

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
    # Never off unsaid (issue 36, item 1).
    Mutation(
        name="an override turns a required plugin off",
        module="guard/pytest/switch.py",
        original="    if declared.requires and given is not None:\n",
        broken="    if False:\n",
        tests=(
            f"{ENABLE}test_an_override_cannot_turn_off_a_plugin_the_project_requires"
            "[in PYTEST_ADDOPTS]",
            f"{ENABLE}test_an_override_cannot_turn_off_a_plugin_the_project_requires"
            "[only required_plugins]",
        ),
        check="an-override-cannot-turn-a-required-plugin-off",
    ),
    Mutation(
        name="off by the project's file, unsaid",
        module="guard/pytest/plugin.py",
        original="        switch.judge_off(early_config)\n",
        broken="        pass\n",
        tests=(
            f"{ENABLE}test_off_by_the_projects_own_file_is_said_in_one_line[cloudguard = false]",
        ),
        check="off-is-said",
    ),
    Mutation(
        name="-p no:cloudguard, unsaid",
        module="guard/pytest/blocked.py",
        original="    _say_if_blocked(early_config)\n",
        broken="    pass\n",
        tests=(f"{ENABLE}test_a_blocked_plugin_the_project_names_is_said_in_one_line",),
        check="a-blocked-plugin-is-said",
    ),
    Mutation(
        name="the sibling entry point satisfies required_plugins",
        module="guard/pytest/blocked.py",
        original="    if declared.required:\n",
        broken="    if False:\n",
        tests=(f"{ENABLE}test_a_blocked_plugin_the_project_requires_stops_the_session",),
        check="a-blocked-required-plugin-stops",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_a_nested_session_rule_turns_its_test_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)

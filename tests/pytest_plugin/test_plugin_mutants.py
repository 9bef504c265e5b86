"""Negative control for the nested-session rule (harness: tests/cloudguard_mutants.py).

A pytest session started by another session's test shares that session's log;
it must judge only records naming its own tests. Break that rule in a copy of
the package and the named test must go red, for that reason.
"""

from __future__ import annotations

from pathlib import Path

from cloudguard_mutants import Mutation, assert_turns_red

NESTED = Mutation(
    name="nested session judges the outer session's records",
    module="pytest_plugin.py",
    original='            records = tuple(r for r in records if r.get("test") in self.own_tests)\n',
    broken="            pass\n",
    tests=(
        "tests/pytest_plugin/test_plugin_enable.py::"
        "test_a_session_nested_in_another_sessions_test_judges_only_its_own_tests",
    ),
    reason="assert 98 == 0",
)


def test_breaking_the_nested_session_rule_turns_its_test_red(tmp_path: Path) -> None:
    assert_turns_red(tmp_path, NESTED)

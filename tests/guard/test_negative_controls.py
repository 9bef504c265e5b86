"""Negative controls: break each guard on purpose; the named tests must go red for the right
reason (harness: tests/cloudguard_mutants.py).

Each control mutates one guard in a copy of the package: the seal drops
nothing, the provider is not bound, the guard bin is off PATH, the check sees
nothing, the refusers record nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cloudguard_mutants import Mutation, assert_green_unmutated, assert_turns_red

MUTATIONS = [
    Mutation(
        name="seal drops nothing",
        module="seal.py",
        original="return name in self.names or name.startswith(self.prefixes)",
        broken="return False",
        tests=(
            "tests/guard/test_refusers.py::test_hostile_environment_nothing_planted_reaches_the_command_or_the_record",
            "tests/guard/test_run.py::test_a_clean_command_keeps_its_own_exit_code_and_prints_one_seal_line",
        ),
        reason="planted identity variables reached the sealed command",
    ),
    Mutation(
        name="provider not bound",
        module="seal.py",
        original="env[variable] = str(seal.provider)",
        broken="pass",
        tests=("tests/guard/test_run.py::test_the_refusing_provider_is_bound_and_refuses_loudly",),
        reason="provider call was not refused",
    ),
    Mutation(
        name="guard bin not on PATH",
        module="seal.py",
        original='env["PATH"] = guard_first(seal, environ.get("PATH", ""))',
        broken='env["PATH"] = environ.get("PATH", "")',
        tests=(
            "tests/guard/test_run.py::test_a_reach_makes_the_run_red_and_names_what_was_reached",
            "tests/guard/test_refusers.py::test_hostile_environment_nothing_planted_reaches_the_command_or_the_record",
        ),
        reason="did not go red",
    ),
    Mutation(
        name="check sees nothing",
        module="runner.py",
        original="    if not records:\n",
        broken="    if True:\n",
        tests=(
            "tests/guard/test_run.py::test_a_reach_makes_the_run_red_and_names_what_was_reached",
            "tests/guard/test_run.py::test_check_reports_clean_red_and_unreadable_logs",
        ),
        reason="run did not go red on a reach",
    ),
    Mutation(
        name="refuser records nothing",
        module="reach.py",
        original="        append(log, record)\n",
        broken="        pass\n",
        tests=(
            "tests/guard/test_refusers.py::test_every_shipped_shim_records_then_refuses_with_98",
            "tests/guard/test_run.py::test_a_reach_makes_the_run_red_and_names_what_was_reached",
        ),
        reason="run did not go red on a reach",
    ),
    Mutation(
        name="shims do not know their log",
        module="seal.py",
        original="log={_absolute(log)!r})",
        broken="log=None)",
        tests=(
            "tests/guard/test_refusers.py::test_a_shim_made_for_a_log_records_there_with_a_scrubbed_environment",
        ),
        reason="NOT recorded",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_guard_turns_its_tests_red(tmp_path: Path, mutation: Mutation) -> None:
    assert_turns_red(tmp_path, mutation)


def test_the_named_tests_pass_without_a_mutation(tmp_path: Path) -> None:
    assert_green_unmutated(tmp_path, MUTATIONS)

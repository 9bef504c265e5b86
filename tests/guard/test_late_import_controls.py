"""Negative controls: nothing is imported after the command started (harness:
tests/cloudguard_mutants.py).

`cloudguard run` loads every module its verdict and reports use before the
command starts, and refuses any import after (cloudguard.guard.late_imports).
Each control breaks one half, or moves the report formats' import back after
the command, and requires tests/guard/test_run.py to fail at its named check.
"""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

RUN = "tests/guard/test_run.py::"
NOTHING_LATE = f"{RUN}test_nothing_is_imported_after_the_command_started"
REFUSED = f"{RUN}test_an_import_after_the_command_started_is_refused_and_never_runs"
REFUSAL_ON = "    sys.meta_path.insert(0, finder)\n"
REFUSAL_OFF = "        sys.meta_path.remove(finder)\n"
NO_REFUSAL = (
    ("guard/late_imports.py", REFUSAL_ON, "    pass\n"),
    ("guard/late_imports.py", REFUSAL_OFF, "        pass\n"),
)

MUTATIONS = [
    Mutation(
        name="the report formats are imported after the command",
        module="guard/late_imports.py",
        original="        report.load(name)\n",
        broken="        pass\n",
        also=NO_REFUSAL,
        tests=(f"{NOTHING_LATE}[soft]", f"{NOTHING_LATE}[hard]"),
        check="nothing-imported-after-the-command",
    ),
    Mutation(
        name="an import after the command is not refused",
        module="guard/late_imports.py",
        original=REFUSAL_ON,
        broken="    pass\n",
        also=(NO_REFUSAL[1],),
        tests=(REFUSED,),
        check="a-late-import-is-refused",
    ),
    Mutation(
        # The refusal stays: a module missed fails the run loudly, it never runs.
        name="nothing is loaded before the command",
        module="guard/runner.py",
        original="        late_imports.load_what_comes_after(reports)\n",
        broken="        pass\n",
        tests=(f"{NOTHING_LATE}[soft]",),
        check="the-run-is-red-and-reported",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_a_late_import_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)

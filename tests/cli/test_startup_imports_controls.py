"""Negative controls for issue 34 item 1: undo each start-up cut in a copy of cloudguard (or
make the lean coercion give another value than typer's); each test must fail at its check."""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

STARTUP = "tests/cli/test_startup_imports.py"
AUDIT = f"{STARTUP}::test_an_audit_without_history_loads_neither_pydantic_nor_other_commands"
VALUES = f"{STARTUP}::test_each_value_is_what_typer_would_give"
STRING_AS_GIVEN = "            if self.annotation is str and type(value) is str:\n"

MUTATIONS = [
    Mutation(
        name="typer's pydantic coercion is built for every parameter",
        module="cli/__init__.py",
        original="lean_coercion.apply()\n",
        broken="pass\n",
        tests=(AUDIT,),
        check="a-value-needs-no-pydantic",
    ),
    Mutation(
        name="an audit registers every command",
        module="cli/__init__.py",
        original="    named = _REGISTERS.get(sys.argv[1]) if len(sys.argv) > 1 else None\n",
        broken="    named = None\n",
        tests=(AUDIT,),
        check="only-the-named-command-registers",
    ),
    Mutation(
        name="the history store is imported with the audit's memory",
        module="audit/remember.py",
        original="from cloudguard.history.errors import HistoryUnavailable\n",
        broken=(
            "from cloudguard.history.errors import HistoryUnavailable\n"
            "from cloudguard.history.location import open_store\n"
        ),
        tests=(AUDIT,),
        check="no-history-loads-no-store",
    ),
    Mutation(
        name="the webhooks' sender is imported with the settings",
        module="settings/history_values.py",
        original="from cloudguard.cloud.options import OptionValueError, string\n",
        broken=(
            "from cloudguard.cloud.options import OptionValueError, string\n"
            "from cloudguard.notify.send import KINDS\n"
        ),
        tests=(AUDIT,),
        check="no-webhook-loads-no-sender",
    ),
    Mutation(
        name="the lean coercion changes a string",
        module="cli/lean_coercion.py",
        original=STRING_AS_GIVEN + "                return value\n",
        broken=STRING_AS_GIVEN + "                return value.strip()\n",
        tests=(f"{VALUES}[a-padded-string]",),
        check="the-values-typer-would-give",
    ),
    Mutation(
        name="the lean coercion takes repeated numbers for strings",
        module="cli/lean_coercion.py",
        original="            if self.annotation == list[str] and _strings(value):\n",
        broken="            if _strings(value):\n",
        tests=(f"{VALUES}[numbers-repeated]",),
        check="the-values-typer-would-give",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_undoing_a_startup_cut_turns_its_test_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)

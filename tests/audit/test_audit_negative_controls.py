"""Negative controls: break the auditor's scale-era rules on purpose; the named tests must go
red at their named checks (harness: tests/cloudguard_mutants.py).

Each rule here keeps an audit honest: one hostile generation must not switch the
generation check off for everyone, a duration without a unit is not guessed, the
same VM is not billed twice, a VM of unknown power state is not "not billable", and
`--output` never writes through a planted symlink.
"""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

EVIDENCE = "tests/audit/test_audit_evidence.py"
INVENTORY = "tests/audit/test_audit_inventory.py"
CONFIG_97 = "tests/audit/test_audit_config.py::test_invalid_config_is_97_naming_the_key"
OPTIONS_97 = "tests/audit/test_audit_options.py::test_every_audit_key_is_validated_97_naming_it"
INERT = "tests/audit/test_audit_inert_cells.py"

MUTATIONS = [
    Mutation(
        name="a promised object fails the whole generation check",
        module="audit/evidence/repository_generations.py",
        original="    if not culprit:\n",
        broken="    if True:\n",
        tests=(
            f"{EVIDENCE}::test_an_object_promised_to_a_partial_clone_is_unverifiable_for_that_vm_only",
        ),
        check="one-promised-object-fails-one-vm",
    ),
    Mutation(
        name="a bare number is a duration in seconds",
        module="cloud/options.py",
        original="    if isinstance(value, int | float):\n        raise",
        broken=(
            "    if isinstance(value, int | float):\n"
            "        return timedelta(seconds=value)\n"
            "        raise"
        ),
        tests=(f"{CONFIG_97}[grace = 5-audit.grace]", f"{CONFIG_97}[grace = 2.5-audit.grace]"),
        check="an-invalid-value-is-refused",
    ),
    Mutation(
        name="a config value is taken unparsed",
        module="settings/option_spec.py",
        original="        return _checked(declared, _resolve(declared, declared.parse(raw), base)"
        ")\n",
        broken="        return _checked(declared, _resolve(declared, raw, base))\n",
        tests=(f"{OPTIONS_97}[grace]",),
        check="every-key-is-validated",
    ),
    Mutation(
        name="duplicates are counted again",
        module="audit/auditor.py",
        original="            first = self._seen.get(key)\n",
        broken="            first = None\n",
        tests=(f"{INVENTORY}::test_the_same_resource_twice_is_counted_once_with_a_warning",),
        check="a-duplicate-is-counted-once",
    ),
    Mutation(
        name="unknown power state priced as not billable",
        module="audit/cost.py",
        original='    if resource.power_state == "unknown":\n',
        broken="    if False:\n",
        tests=(f"{INVENTORY}::test_without_power_state_the_cost_is_unknown_not_zero",),
        check="unknown-power-is-unknown-cost",
    ),
    Mutation(
        name="--output follows a symlink",
        module="cli/audit.py",
        original="with open(open_private(destination),",
        broken="with open(destination,",
        tests=(
            "tests/audit/test_audit_formats.py::test_output_is_never_written_through_a_planted_symlink",
            "tests/audit/test_audit_trust.py::test_output_never_follows_a_planted_symlink",
        ),
        check="output-follows-no-link",
    ),
    Mutation(
        name="an address in a markdown cell is not split",
        module="escape.py",
        original='| {"@": "\\\\@<!-- -->"}',
        broken="",
        tests=(f"{INERT}::test_the_markdown_report_makes_no_link",),
        check="no-link-in-markdown",
    ),
    Mutation(
        name="markdown cells escape only link syntax",
        module="escape.py",
        original='_ACTIVE = "\\\\`*_~|[]()!<>&:."',
        broken='_ACTIVE = "\\\\`*_~|[]()!<>&"',
        tests=(f"{INERT}::test_the_markdown_report_makes_no_link",),
        check="no-link-in-markdown",
    ),
    Mutation(
        name="plain-text messages are not defanged",
        module="escape.py",
        original="    for fang, defanged in _FANGS:\n",
        broken="    for fang, defanged in ():\n",
        tests=(
            f"{INERT}::test_sarif_messages_make_no_link",
            f"{INERT}::test_junit_messages_make_no_link",
        ),
        check={
            f"{INERT}::test_sarif_messages_make_no_link": "no-link-in-sarif",
            f"{INERT}::test_junit_messages_make_no_link": "no-link-in-junit",
        },
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_an_audit_rule_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)

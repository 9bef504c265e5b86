"""Negative controls: the core must ask the adapter, not assume a cloud.

Break the lookup of a per-cloud rule, or the delivery of a cloud's own
option, in a copy of the core; the third cloud's tests
(tests/audit/test_third_cloud.py, a cloud the core has never heard of) must
go red at their named checks (harness: tests/cloudguard_mutants.py).
"""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

THIRD = (
    "tests/audit/test_third_cloud.py::test_a_third_cloud_audits_from_its_export_with_its_own_rules"
)
OWN_OPTION = (
    "tests/audit/test_third_cloud.py::"
    "test_a_third_cloud_takes_an_option_of_its_own_from_the_command_line_and_the_config"
)

MUTATIONS = [
    Mutation(
        name="a cloud's own option values not delivered to its sweep",
        module="settings/engine_requests.py",
        original="settings=_own_values(settings, cloud.options)",
        broken="settings={}",
        tests=(OWN_OPTION,),
        check="its-own-option-delivered",
    ),
    Mutation(
        name="tag-name case not asked of the adapter",
        module="cloud/cloud.py",
        original='bool(_member(adapter, "case_insensitive_names", False))',
        broken="False",
        tests=(THIRD,),
        check="label-names-folded",
    ),
    Mutation(
        name="billable power states not asked of the adapter",
        module="audit/cost.py",
        original="    if resource.power_state not in cloud.billable_power_states:\n",
        broken="    if False:\n",
        tests=(THIRD,),
        check="its-billable-states",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_an_adapter_lookup_turns_the_third_cloud_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)

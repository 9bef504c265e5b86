"""Negative controls: plant an arrow back up or a cycle in a copy; the graph's tests go red.

Each plant is a function-level import (never run, so the copy still imports
and the suite still collects): the graph must see it all the same, and each
named test must fail at the check naming the planted edge (harness:
tests/cloudguard_mutants.py).
"""

from __future__ import annotations

from pathlib import Path

import cloudguard_aws
import pytest
from cloudguard_mutants import Mutation, assert_turns_red

GRAPH = "tests/architecture/test_import_graph.py"
CYCLES = f"{GRAPH}::test_no_module_of_cloudguard_or_an_adapter_is_in_an_import_cycle"
ARROWS = f"{GRAPH}::test_every_arrow_points_down"
MAPS = (
    "tests/architecture/test_package_maps.py::"
    "test_every_package_docstring_names_each_of_its_modules"
)


def _planted(import_line: str) -> str:
    return f"\n\ndef _planted() -> None:\n    {import_line}  # noqa: F401\n"


MUTATIONS = [
    Mutation(
        name="the kernel's records import the auditor (an arrow back up, and a cycle)",
        module="cloud/records.py",
        original="\n\ndef tag_value(",
        broken=_planted("from cloudguard.audit import auditor") + "\n\ndef tag_value(",
        tests=(ARROWS, CYCLES),
        check={
            ARROWS: "arrow cloudguard.cloud.records -> cloudguard.audit.auditor",
            CYCLES: "cycle edge cloudguard.cloud.records -> cloudguard.audit.auditor",
        },
    ),
    Mutation(
        name="two kernel modules import each other (a cycle inside one layer)",
        module="cloud/cloud.py",
        original="\n\nclass UnknownCredentialError(",
        broken=_planted("from cloudguard.cloud import adapter_registry")
        + "\n\nclass UnknownCredentialError(",
        tests=(CYCLES,),
        check="cycle edge cloudguard.cloud.cloud -> cloudguard.cloud.adapter_registry",
    ),
    Mutation(
        name="the gate names the write judge's type again (a type-only cycle)",
        module="guard/hard/gate.py",
        original="if TYPE_CHECKING:\n    from typing import Protocol\n",
        broken="if TYPE_CHECKING:\n    from typing import Protocol\n\n"
        "    from cloudguard.guard.hard.writes import Writes  # noqa: F401\n",
        tests=(CYCLES,),
        check="cycle edge cloudguard.guard.hard.gate -> cloudguard.guard.hard.writes",
    ),
    Mutation(
        name="the reaper's map forgets its admission rules",
        module="reap/__init__.py",
        original="- `admission`  whether",
        broken="- admission    whether",
        tests=(MAPS,),
        check="unnamed module cloudguard.reap.admission",
    ),
    Mutation(
        name="a document imports the reaper (an arrow back up)",
        module="documents/plan.py",
        original="\n\nclass PlanError(",
        broken=_planted("from cloudguard.reap import verify") + "\n\nclass PlanError(",
        tests=(ARROWS,),
        check="arrow cloudguard.documents.plan -> cloudguard.reap.verify",
    ),
    Mutation(
        name="the auditor reads the settings again (an engine imports the settings layer)",
        module="audit/remember.py",
        original="\n\ndef store_location(",
        broken=_planted("from cloudguard.settings import core_options") + "\n\ndef store_location(",
        tests=(ARROWS,),
        check="arrow cloudguard.audit.remember -> cloudguard.settings.core_options",
    ),
    Mutation(
        name="the reaper builds its own requests (an engine imports the settings boundary)",
        module="reap/apply.py",
        original="\n\ndef apply_plan(",
        broken=_planted("from cloudguard.settings import engine_requests") + "\n\ndef apply_plan(",
        tests=(ARROWS,),
        check="arrow cloudguard.reap.apply -> cloudguard.settings.engine_requests",
    ),
    Mutation(
        name="an adapter imports the auditor, not the kernel",
        module="export.py",
        original="\n\nclass DescribeInstancesExport",
        broken=_planted("from cloudguard.audit import inventory_files")
        + "\n\nclass DescribeInstancesExport",
        tests=(ARROWS,),
        check="arrow cloudguard_aws.export -> cloudguard.audit.inventory_files",
        package=Path(cloudguard_aws.__file__).resolve().parent,
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_a_planted_edge_turns_the_graph_red_naming_it(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)

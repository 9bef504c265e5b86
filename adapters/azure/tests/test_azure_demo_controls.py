"""Negative controls for `cloudguard demo --serve`: break it in a copy of cloudguard_azure;
the serve test must fail at its named check (harness: tests/cloudguard_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import cloudguard_azure
import pytest
from cloudguard_mutants import AZURE_SDKS, Mutation, assert_turns_red

AZURE = Path(cloudguard_azure.__file__).resolve().parent
SERVE = (
    "adapters/azure/tests/test_azure_demo.py::"
    "test_demo_serve_leaves_a_fleet_to_audit_and_reap_until_ctrl_c",
)

MUTATIONS = [
    Mutation(
        name="the printed commands leave out the fake's credential",
        module="demo.py",
        original='        "--credential",\n        "fake-arm",\n',
        broken="",
        tests=SERVE,
        check="the-printed-audit-finds-the-orphan",
        package=AZURE,
    ),
    Mutation(
        name="the printed audit reads the cloudguard.toml of wherever it is run",
        module="demo.py",
        original="*audit_options(arm, home, repo), *config]\n",
        broken="*audit_options(arm, home, repo)]\n",
        tests=SERVE,
        check="the-printed-audit-finds-the-orphan",
        package=AZURE,
    ),
    Mutation(
        name="Ctrl-C is not the demo's to handle: it aborts",
        module="demo.py",
        original="{sig: signal.signal(sig, stopping) for sig in (signal.SIGINT, signal.SIGTERM)}",
        broken="{}",
        tests=SERVE,
        check="ctrl-c-stops-it-cleanly",
        package=AZURE,
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_served_demo_turns_its_test_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS, AZURE_SDKS)

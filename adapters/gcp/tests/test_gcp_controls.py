"""Negative controls for the Google Cloud adapter: break it in a copy of cloudguard_gcp (or of
cloudguard_azure, whose `az vm list` parser must leave a Compute Engine instance alone); the
named test must fail at its named check (harness: tests/cloudguard_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import cloudguard_azure
import cloudguard_gcp
import pytest
from cloudguard_mutants import GCP_SDKS, Mutation, assert_turns_red

GCP = Path(cloudguard_gcp.__file__).resolve().parent
AZURE = Path(cloudguard_azure.__file__).resolve().parent
EXPORTS = "adapters/gcp/tests/test_gcp_exports.py::"
INCIDENT = "adapters/gcp/tests/test_gcp_incident.py::"
COMMANDS = "adapters/gcp/tests/test_gcp_delete_commands.py::"

MUTATIONS = [
    Mutation(
        name="a label key keeps a character no label can hold",
        module="labels.py",
        original='re.compile(r"[^a-z0-9_-]")',
        broken='re.compile(r"[^a-z0-9_.-]")',
        tests=(EXPORTS + "test_fleet_tag_names_as_label_keys_and_values",),
        check="tag-name-as-label-key",
        package=GCP,
    ),
    Mutation(
        name="GCP tag names compared exactly: a Task-Id task tag misses the task-id label",
        module="adapter.py",
        original="    case_insensitive_names = True\n",
        broken="    case_insensitive_names = False\n",
        tests=(EXPORTS + "test_a_task_tag_configured_in_capitals_finds_the_lower_case_label",),
        check="capitals-find-the-label",
        package=GCP,
        # A configured name is also lower-cased as the label key it names (tag_name).
        also=(("adapter.py", "        return labels.label_key(name)\n", "        return name\n"),),
    ),
    Mutation(
        name="a configured tag name is read as given, not as the label key a fleet writes",
        module="adapter.py",
        original="        return labels.label_key(name)\n",
        broken="        return name\n",
        tests=(EXPORTS + "test_a_tag_name_no_label_can_hold_finds_the_label_a_fleet_writes",),
        check="tag-name-read-as-its-label",
        package=GCP,
    ),
    Mutation(
        name="az vm list's parser claims any entry with an id (a Compute Engine instance)",
        module="export.py",
        original='            and not entry["id"].isdecimal()\n',
        broken="",
        tests=(EXPORTS + "test_a_compute_instance_is_told_apart_from_an_az_vm_entry",),
        check="instance-told-apart-by-shape",
        package=AZURE,
    ),
    Mutation(
        name="the asset search claims an entry without an assetType",
        module="export.py",
        original='            and isinstance(entry.get("assetType"), str)\n',
        broken="",
        tests=(EXPORTS + "test_shapes_claimed_by_neither_parser",),
        check="other-shapes-not-claimed",
        package=GCP,
    ),
    Mutation(
        name="an asset type is its kind as it is (no shared kinds)",
        module="export.py",
        original="        kind = kinds.kind_of(asset_type)\n",
        broken="        kind = asset_type.casefold()\n",
        tests=(EXPORTS + "test_each_asset_type_is_its_kind_and_the_rest_their_asset_type",),
        check="asset-type-is-its-kind",
        package=GCP,
    ),
    Mutation(
        name="a TERMINATED instance read as running",
        module="export.py",
        original='    "TERMINATED": "stopped",\n',
        broken='    "TERMINATED": "running",\n',
        tests=(EXPORTS + "test_instance_status_decides_the_power_state_both_ways",),
        check="status-decides-power",
        package=GCP,
    ),
    Mutation(
        name="a live sweep without a scope reads nothing and says nothing (clean)",
        module="live.py",
        original='resources=(), failures=(SourceFailure(source="gcp", reason=NO_SCOPE),)',
        broken="resources=(), failures=()",
        tests=(INCIDENT + "test_a_live_gcp_sweep_without_a_scope_is_did_not_run_not_clean",),
        check="scopeless-sweep-did-not-run",
        package=GCP,
    ),
    Mutation(
        name="a gcloud command is built from any name, shell text and all",
        module="delete_commands.py",
        original='_SAFE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,221}$")',
        broken='_SAFE = re.compile(r".")',
        tests=(COMMANDS + "test_no_command_for_a_name_that_could_carry_shell_text",),
        check="no-command-for-shell-text",
        package=GCP,
    ),
    Mutation(
        name="a regional address is deleted as a global one",
        module="delete_commands.py",
        original='    elif scope == "regions" and where:\n',
        broken='    elif scope == "regions" and not where:\n',
        tests=(
            COMMANDS + "test_each_kind_gets_the_gcloud_command_with_its_zone_region_and_project",
        ),
        check="gcloud-command-per-kind",
        package=GCP,
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_gcp_adapter_turns_its_test_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS, GCP_SDKS)

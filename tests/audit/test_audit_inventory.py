"""Inventory files: both producers are read, and anything unreadable is exit 75, never 0."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import pytest
from audit_helpers import aws_instance, aws_instances, azure_vm, run_audit_cli, write_json

from cloudguard.audit.inventory_files import InventoryFile, parse_time


def test_az_vm_list_is_normalised(tmp_path):
    created = datetime(2025, 3, 1, 8, 30, tzinfo=UTC)
    path = write_json(
        tmp_path / "az.json",
        [azure_vm("vm-a", tags={"task-id": "t"}, power="VM deallocated", created=created)],
    )
    (resource,) = InventoryFile(str(path)).read().resources
    assert resource.provider == "azure"
    assert resource.account == "00000000-0000-0000-0000-00000000c7c7"
    assert (resource.group, resource.region, resource.size) == (
        "pilot",
        "eastus",
        "Standard_D4as_v6",
    )
    assert resource.power_state == "deallocated"
    assert resource.created == created  # timeCreated, seven fractional digits and all
    assert resource.tag("TASK-ID") == "t"


def test_aws_describe_instances_is_normalised(tmp_path):
    launched = datetime(2025, 3, 1, 8, 30, tzinfo=UTC)
    document = aws_instances(
        aws_instance("i-0abc", tags={"task-id": "t", "Name": "web"}, launched=launched),
        aws_instance("i-0def", tags={"Task-Id": "t2"}, state="stopped"),
    )
    first, second = InventoryFile(str(write_json(tmp_path / "aws.json", document))).read().resources
    assert (first.provider, first.account, first.region) == ("aws", "123456789012", "us-east-1")
    assert (first.id, first.name, first.size, first.power_state) == (
        "i-0abc",
        "web",
        "m5.large",
        "running",
    )
    assert first.created == launched
    assert first.tags == {"task-id": "t", "Name": "web"}
    # EC2 tag keys are case-sensitive: `Task-Id` is not `task-id`.
    assert second.tag("task-id") is None and second.power_state == "stopped"


def test_stdin_is_read_for_dash():
    text = json.dumps([azure_vm("vm-s", tags=None)])
    (resource,) = InventoryFile("-", stdin=io.StringIO(text)).read().resources
    assert resource.name == "vm-s"


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("[{", "malformed JSON"),
        ("", "empty file"),
        ("   \n", "empty file"),
        ('{"value": []}', "not an inventory"),
        ('[{"name": "no-id"}]', "entry 0 is not an az VM object"),
        ('{"Reservations": [{"Instances": [{}]}]}', "no string InstanceId"),
        ("\xff\xfe", "cannot read"),
    ],
)
def test_bad_inventories_make_the_audit_exit_75_naming_the_file(tmp_path, content, why):
    path = tmp_path / "inventory.json"
    if content == "\xff\xfe":
        path.write_bytes(b"\xff\xfe[]")
    else:
        path.write_text(content)
    result = run_audit_cli("--inventory", str(path), "--format", "json")
    assert result.exit_code == 75, result.stderr
    assert f"could not read inventory {path}" in result.stderr
    assert why in result.stderr
    assert json.loads(result.stdout)["failures"][0]["source"] == f"inventory {path}"


def test_a_missing_inventory_file_exits_75(tmp_path):
    result = run_audit_cli("--inventory", str(tmp_path / "absent.json"))
    assert result.exit_code == 75
    assert "absent.json" in result.stderr


def test_one_bad_inventory_among_good_ones_still_exits_75(tmp_path):
    good = write_json(tmp_path / "good.json", [azure_vm("vm-a", tags={"task-id": "t"})])
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    result = run_audit_cli("--inventory", str(good), "--inventory", str(bad))
    assert result.exit_code == 75


def test_an_empty_az_list_is_a_clean_audit(tmp_path):
    path = write_json(tmp_path / "none.json", [])
    result = run_audit_cli(
        "--inventory", str(path), "--controller-records", "-", stdin='{"tasks": []}'
    )
    assert result.exit_code == 0, result.stderr
    assert "0 resources" in result.stdout


def test_missing_and_odd_times_are_unknown_not_errors():
    assert parse_time(None) is None
    assert parse_time("yesterday") is None
    assert parse_time("2025-01-01T00:00:00") == datetime(2025, 1, 1, tzinfo=UTC)

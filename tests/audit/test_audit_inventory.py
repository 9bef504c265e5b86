"""Inventory files: both producers are read, and anything unreadable is exit 75, never 0."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import pytest
from audit_helpers import aws_instance, aws_instances, azure_vm, run_audit_cli, write_json
from named_checks import broken

from cloudguard.audit.inventory_files import InventoryFile
from cloudguard.cloud.exports import parse_time


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
        # Each installed adapter's parser is named (the order is theirs, by name).
        ('[{"name": "no-id"}]', "nor an az VM object (no string `id`)"),
        # Entries are decoded one at a time, as strictly as json.loads does.
        ('[{"id": "/a"} {"id": "/b"}]', "malformed JSON"),
        ('[{"id": "/a"},]', "malformed JSON"),
        ('[{"id": "/a"}] []', "malformed JSON"),
        ('[{"id": "/a"}', "malformed JSON"),
        ('[[{"InstanceId": "i-1"}], ["not an instance"]]', "no string InstanceId"),
        ('{"Reservations": [{"Instances": [{}]}]}', "no string InstanceId"),
        ("\x80", "cannot read"),  # not UTF-8 (nor UTF-16, which starts with its mark)
    ],
)
def test_bad_inventories_make_the_audit_exit_75_naming_the_file(tmp_path, content, why):
    path = tmp_path / "inventory.json"
    if content == "\x80":
        path.write_bytes(b"\x80[]")
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


def _aws_query_forms(tmp_path):
    """One instance in every shape `aws ec2 describe-instances` prints for it."""
    instance = aws_instance("i-0abc", tags={"task-id": "t", "Name": "web"}, state="stopped")
    other = aws_instance("i-0def", tags={"task-id": "t2"})
    return {
        "plain": aws_instances(instance, other),
        # --query 'Reservations[].Instances[]': one flat list of instances.
        "flat": [instance, other],
        # --query 'Reservations[*].Instances[*]': a list per reservation.
        "nested": [[instance], [other]],
    }


@pytest.mark.parametrize("form", ["plain", "flat", "nested"])
def test_aws_describe_instances_query_forms_are_read_alike(tmp_path, form):
    document = _aws_query_forms(tmp_path)[form]
    first, second = InventoryFile(str(write_json(tmp_path / "aws.json", document))).read().resources
    assert (first.provider, first.id, first.name, first.region) == (
        "aws", "i-0abc", "web", "us-east-1",
    )  # fmt: skip
    assert (first.power_state, first.size, first.tag("task-id")) == ("stopped", "m5.large", "t")
    assert second.id == "i-0def"
    # The --query forms leave out the reservation, and with it the owner account.
    assert first.account == ("123456789012" if form == "plain" else "")


def test_aws_query_form_audits_like_the_plain_output(tmp_path):
    forms = _aws_query_forms(tmp_path)
    reports = {}
    for form in ("plain", "flat"):
        path = write_json(tmp_path / f"{form}.json", forms[form])
        result = run_audit_cli(
            "--inventory", str(path), "--controller-records", "-", "--format", "json",
            stdin='{"tasks": ["t"]}',
        )  # fmt: skip
        assert result.exit_code == 1, result.stderr
        reports[form] = json.loads(result.stdout)
    verdicts = {
        form: sorted((f["resource"]["id"], f["verdict"]) for f in r["findings"])
        for form, r in reports.items()
    }
    assert verdicts["flat"] == verdicts["plain"] == [("i-0abc", "ok"), ("i-0def", "orphan")]


def test_the_same_resource_twice_is_counted_once_with_a_warning(tmp_path):
    vms = [azure_vm("vm-a", tags={"task-id": "t"}), azure_vm("vm-b", tags={"task-id": "t"})]
    once = write_json(tmp_path / "once.json", vms)
    again = write_json(tmp_path / "again.json", vms)
    # ARM ids are case-insensitive: the same VM may come back in another case.
    upper = dict(vms[0], id=vms[0]["id"].upper())
    overlap = write_json(tmp_path / "overlap.json", [upper])
    args = ["--controller-records", "-", "--format", "json"]
    single = run_audit_cli("--inventory", str(once), *args, stdin='{"tasks": []}')
    result = run_audit_cli(
        "--inventory", str(once), "--inventory", str(again), "--inventory", str(overlap), *args,
        stdin='{"tasks": []}',
    )  # fmt: skip
    assert single.exit_code == result.exit_code == 1, result.stderr
    alone, report = json.loads(single.stdout), json.loads(result.stdout)
    assert report["summary"] == alone["summary"], broken(
        "a-duplicate-is-counted-once", "a duplicate resource was counted twice"
    )
    assert report["summary"]["resources"] == 2 and report["summary"]["hourly"] > 0
    assert alone["warnings"] == []  # control: no warning without a duplicate
    assert len(report["warnings"]) == 2
    assert f"2 duplicate resources (same id, e.g. {vms[0]['id']}) in {again}" in result.stderr
    assert f"1 duplicate resource (same id, e.g. {upper['id']}) in {overlap}" in result.stderr
    assert f"already seen in {once}: counted once" in report["warnings"][0]


def test_without_power_state_the_cost_is_unknown_not_zero(tmp_path):
    # `az vm list` without -d prints no powerState at all.
    with_state = azure_vm("vm-known", tags={"task-id": "t"})
    without = azure_vm("vm-plain", tags={"task-id": "t"})
    del without["powerState"]
    path = write_json(tmp_path / "az.json", [with_state, without])
    result = run_audit_cli(
        "--inventory", str(path), "--controller-records", "-", "--format", "json",
        stdin='{"tasks": []}',
    )  # fmt: skip
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    found = {f["resource"]["name"]: f for f in report["findings"]}
    plain, known = found["vm-plain"], found["vm-known"]
    assert plain["resource"]["power_state"] == "unknown"
    assert plain["billable"] is None, broken(
        "unknown-power-is-unknown-cost", f"no power state, yet billable is {plain['billable']}"
    )
    assert (plain["cost"]["hourly"], plain["cost"]["accrued"]) == (None, None)
    assert "cost unknown" in plain["cost"]["note"]
    # Control: the VM with a power state is priced as before.
    assert known["billable"] is True and known["cost"]["hourly"] > 0
    assert (report["summary"]["billable"], report["summary"]["power_unknown"]) == (1, 1)
    assert f"1 fleet VM from {path} with no power state: cost unknown" in result.stderr
    assert len(report["warnings"]) == 1 and "no power state" in report["warnings"][0]
    table = run_audit_cli(
        "--inventory", str(path), "--controller-records", "-", stdin='{"tasks": []}'
    )
    assert table.exit_code == 1, table.stderr
    row = next(line for line in table.stdout.splitlines() if "vm-plain" in line)
    assert "unknown (power state unknown)" in row and "no (disks bill)" not in row
    assert "1 more of unknown billing" in table.stdout

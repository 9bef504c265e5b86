"""`cloudguard audit` with owned-id evidence: Terraform state, a command, a file.

The end-to-end contract: a fleet VM with no controller record that another
source owns is `ok` with a reason naming that source, an orphan stays an
orphan, and an owned-id source that cannot be read is "did not run" (75)
that calls nothing an orphan.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from audit_helpers import (
    aws_instance,
    aws_instances,
    azure_vm,
    by_name,
    cli_app,
    controller_home,
    run_audit_cli,
    write_json,
)
from named_checks import broken
from trusted_config import write_trusted
from typer.testing import CliRunner

from cloudguard.audit.classify import classify
from cloudguard.audit.cost import bundled_prices
from cloudguard.audit.evidence.interface import Evidence, Facts, Question, cloud_id_key
from cloudguard.audit.evidence.source_registry import SOURCES
from cloudguard.audit.formats import FORMAT_NAMES, FORMATS, get_format
from cloudguard.cloud.records import Resource
from cloudguard.documents.findings import AuditPolicy
from cloudguard.settings.core_options import OPTIONS

STATE_FILE = Path(__file__).parent / "terraform" / "fleet.tfstate"
STATE_SECRET = "Tf-St4te-S3cret-do-not-print"
GENERATION = "0e1d2c3b4a59687766554433221100ffeeddccbb"


@pytest.fixture
def fleet(tmp_path):
    """Two VMs Terraform state owns (no controller record), one the controller knows, one orphan."""
    inventory = write_json(
        tmp_path / "vms.json",
        [
            azure_vm(
                "vm-tf-wkr-01", tags={"task-id": "t-tf-01", "repository-generation": GENERATION}
            ),
            azure_vm("vm-known", tags={"task-id": "t-known"}),
            azure_vm("vm-orphan", tags={"task-id": "t-lost"}),
            azure_vm("jumpbox", tags={"task-id": "t-jump"}),  # only a data source in state
        ],
    )
    home = controller_home(tmp_path / "home", meta=["t-known"])
    return {"inventory": str(inventory), "home": str(home), "state": str(STATE_FILE)}


def test_a_vm_terraform_state_owns_is_ok_without_a_controller_record_and_an_orphan_stays_one(
    fleet,
):
    result = run_audit_cli(
        "--inventory", fleet["inventory"],
        "--controller-home", fleet["home"],
        "--terraform-state", fleet["state"],
        "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    findings = by_name(report)
    owned = findings["vm-tf-wkr-01"]
    assert owned["verdict"] == "ok", broken(
        "an-owned-vm-is-ok",
        f"vm-tf-wkr-01 is {owned['verdict']} {owned['reasons']} although Terraform state owns it",
    )
    assert owned["reasons"] == ["owned-by-terraform-state"]
    assert owned["checks"]["controller_record"] == "missing"  # the fact stays reported
    assert (findings["vm-known"]["verdict"], findings["vm-known"]["reasons"]) == ("ok", [])
    for name in ("vm-orphan", "jumpbox"):
        assert findings[name]["verdict"] == "orphan", f"{name} is not owned: it stays an orphan"
        assert findings[name]["reasons"] == ["no-controller-record"]
    assert report["evidence"]["terraform-state"] == f"terraform state {fleet['state']}"
    assert report["evidence"]["owned-ids-command"] == "not checked (no --owned-ids-command)"


def test_the_table_names_the_owning_source_and_no_state_secret(fleet):
    result = run_audit_cli(
        "--inventory", fleet["inventory"],
        "--controller-home", fleet["home"],
        "--terraform-state", fleet["state"],
    )  # fmt: skip
    assert result.exit_code == 1
    assert "owned-by-terraform-state" in result.stdout
    # Control: the secret is in the state the audit read; it is in no output.
    assert STATE_SECRET in Path(fleet["state"]).read_text()
    assert STATE_SECRET not in result.stdout + result.stderr


def test_an_owned_ids_file_decides_where_there_is_no_controller_evidence(tmp_path):
    owned = azure_vm("vm-owned", tags={"task-id": "t-1"})
    inventory = write_json(
        tmp_path / "vms.json", [owned, azure_vm("vm-other", tags={"task-id": "t-2"})]
    )
    ids = tmp_path / "owned.txt"
    ids.write_text(f"# from the scheduler\n{owned['id'].lower()}\n")
    result = run_audit_cli(
        "--inventory", str(inventory), "--owned-ids", str(ids), "--format", "json"
    )
    assert result.exit_code == 1, result.stderr  # vm-other: unjudged, so the audit fails
    findings = by_name(json.loads(result.stdout))
    assert findings["vm-owned"]["verdict"] == "ok"
    assert findings["vm-owned"]["reasons"] == ["owned-by-owned-ids-file"]
    assert findings["vm-other"]["verdict"] == "unverified"  # not owned, and no record was read


def test_an_owned_ids_command_owns_aws_instances(tmp_path):
    inventory = write_json(
        tmp_path / "ec2.json",
        aws_instances(
            aws_instance("i-0aaa1111bbbb2222c", tags={"task-id": "t-a"}),
            aws_instance("i-0fff9999eeee8888d", tags={"task-id": "t-b"}),
        ),
    )
    home = controller_home(tmp_path / "home")
    command = f'{sys.executable} -c \'print("{{\\"id\\": \\"i-0aaa1111bbbb2222c\\"}}")\''
    result = run_audit_cli(
        "--inventory", str(inventory),
        "--controller-home", str(home),
        "--owned-ids-command", command,
        "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    findings = {f["resource"]["id"]: f for f in report["findings"]}
    assert findings["i-0aaa1111bbbb2222c"]["reasons"] == ["owned-by-owned-ids-command"]
    assert findings["i-0fff9999eeee8888d"]["verdict"] == "orphan"
    # The program, never its arguments (they may carry a token).
    assert report["evidence"]["owned-ids-command"] == f"owned-ids command {sys.executable}"


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (
            ["--owned-ids-command", f"{sys.executable} -c 'import sys; sys.exit(3)'"],
            f"could not read owned-ids command {sys.executable}: exited with status 3",
        ),
        (
            [
                "--owned-ids-command",
                f"{sys.executable} -c 'import time; time.sleep(60)'",
                "--owned-ids-timeout",
                "1s",
            ],
            f"could not read owned-ids command {sys.executable}: timed out after 1 s (killed)",
        ),
        (["--terraform-state", "absent.tfstate"], "could not read terraform state absent.tfstate"),
        (["--owned-ids", "absent.txt"], "could not read owned ids absent.txt: cannot read"),
    ],
    ids=["command-exits-3", "command-times-out", "state-missing", "file-missing"],
)
def test_an_unreadable_owned_id_source_is_75_and_calls_nothing_an_orphan(fleet, extra, named):
    result = run_audit_cli(
        "--inventory", fleet["inventory"], "--controller-home", fleet["home"], *extra,
        "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 75
    assert named in result.stderr
    findings = by_name(json.loads(result.stdout))
    orphan = findings["vm-orphan"]["verdict"]
    assert orphan == "unverified", broken(
        "unread-ownership-is-unverified",
        f"vm-orphan is {orphan} although an unread source may own it",
    )
    assert findings["vm-orphan"]["reasons"] == ["no-controller-record"]
    assert findings["vm-known"]["verdict"] == "ok"


def test_owned_id_sources_live_in_config_too(fleet, tmp_path, monkeypatch):
    write_trusted(
        tmp_path / "cloudguard.toml",
        "[audit]\n"
        'inventory = "vms.json"\n'
        'controller-home = "home"\n'
        f"terraform-state = [{json.dumps(fleet['state'])}]\n"
        f'owned-ids-command = [{json.dumps(sys.executable)}, "-c", "print(\'\\"i-0x\\"\')"]\n'
        'owned-ids-timeout = "30s"\n'
        'format = "json"\n',
    )
    monkeypatch.chdir(tmp_path)
    result = run_audit_cli()
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    assert by_name(report)["vm-tf-wkr-01"]["reasons"] == ["owned-by-terraform-state"]
    assert report["evidence"]["owned-ids-command"] == f"owned-ids command {sys.executable}"


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ('owned-ids-timeout = "0s"', "audit.owned-ids-timeout"),
        ("owned-ids-command = 42", "audit.owned-ids-command"),
        ("owned-ids-command = []", "audit.owned-ids-command"),
        ("terraform-state = 1", "audit.terraform-state"),
    ],
)
def test_a_bad_owned_id_option_in_config_is_97_naming_it(fleet, tmp_path, monkeypatch, body, named):
    (tmp_path / "cloudguard.toml").write_text(f"[audit]\n{body}\n")
    monkeypatch.chdir(tmp_path)
    result = run_audit_cli("--inventory", fleet["inventory"])
    assert result.exit_code == 97
    assert named in result.stderr


@pytest.mark.parametrize(
    "extra",
    [["--owned-ids-timeout", "soon"], ["--owned-ids-command", "fleetctl 'unclosed"]],
    ids=["timeout", "command"],
)
def test_a_bad_owned_id_option_on_the_command_line_is_a_usage_error(fleet, extra):
    assert run_audit_cli("--inventory", fleet["inventory"], *extra).exit_code == 2


# --- classification ----------------------------------------------------------------


def _resource(**tags: str) -> Resource:
    return Resource(
        provider="azure", account="s", region="eastus", group="pilot",
        id="/subscriptions/s/resourceGroups/PILOT/providers/Microsoft.Compute/virtualMachines/vm-1",
        name="vm-1", kind="vm", size="Standard_D4as_v6", power_state="running",
        created=datetime(2026, 1, 1, tzinfo=UTC), tags=tags,
    )  # fmt: skip


def _verdict(resource: Resource, evidence: Evidence, policy: AuditPolicy | None = None):
    now = datetime(2026, 1, 2, tzinfo=UTC)
    finding = classify(resource, evidence, policy or AuditPolicy(), bundled_prices(), now)
    assert finding is not None
    return finding.verdict, finding.reasons


OWNS_VM_1 = (("terraform-state", frozenset({cloud_id_key(_resource().id.lower())})),)


def test_owned_but_with_a_fixture_task_id_is_suspect_not_ok():
    evidence = Evidence(
        controller_tasks=frozenset(), fixture_ids=frozenset({"t-1"}), owned_ids=OWNS_VM_1
    )
    assert _verdict(_resource(**{"task-id": "t-1"}), evidence) == (
        "suspect",
        ("owned-by-terraform-state", "fixture-task-id"),
    )


def test_a_leaked_tag_wins_over_ownership():
    policy = AuditPolicy(leaked_by=(("run-id", "r1"),), grace=timedelta(hours=2))
    verdict, reasons = _verdict(
        _resource(**{"task-id": "t-1", "run-id": "r1"}), Evidence(owned_ids=OWNS_VM_1), policy
    )
    assert verdict == "leaked" and reasons[0] == "leaked-run-tag"


def test_an_untagged_vm_stays_out_of_the_report_even_when_owned():
    now = datetime(2026, 1, 2, tzinfo=UTC)
    assert (
        classify(_resource(), Evidence(owned_ids=OWNS_VM_1), AuditPolicy(), bundled_prices(), now)
        is None
    )


# --- the registries -----------------------------------------------------------------


def test_every_registered_source_has_an_evidence_line_in_registry_order(fleet):
    result = run_audit_cli("--inventory", fleet["inventory"], "--format", "json")
    assert list(json.loads(result.stdout)["evidence"]) == list(SOURCES)


def test_one_format_registry_feeds_help_validation_and_config(fleet):
    (declared,) = [o for o in OPTIONS if o.name == "format"]
    assert declared.parse.choices == FORMAT_NAMES == tuple(FORMATS)  # type: ignore[attr-defined]
    help_text = CliRunner().invoke(cli_app(), ["audit", "--help"], terminal_width=200).stdout
    listed = f"{', '.join(FORMAT_NAMES[:-1])} or {FORMAT_NAMES[-1]}"
    assert listed in " ".join(help_text.replace("│", " ").split())
    for name in FORMAT_NAMES:
        assert callable(get_format(name).render)
    bad = run_audit_cli("--inventory", fleet["inventory"], "--format", "yaml")
    assert bad.exit_code == 2 and "'yaml' is not one of" in bad.output


class SchedulerApi:
    """A source as a plugin writes one: a name, what it reads, facts for one question."""

    name = "scheduler"
    reads = "scheduler https://scheduler.invalid/owned"
    proves_ownership = True

    def __init__(self, owned: str) -> None:
        self.owned = owned

    def facts(self, question: Question) -> Facts:
        assert question.task_ids >= {"t-lost", "t-known"}  # asked once, about the whole fleet
        return Facts(owned_ids=frozenset({cloud_id_key(self.owned)}))


def test_a_new_source_is_one_class_and_one_registration(fleet, monkeypatch):
    lost = next(
        vm for vm in json.loads(Path(fleet["inventory"]).read_text()) if vm["name"] == "vm-orphan"
    )
    monkeypatch.setitem(SOURCES, "scheduler", lambda options: SchedulerApi(lost["id"]))
    result = run_audit_cli(
        "--inventory", fleet["inventory"], "--controller-home", fleet["home"], "--format", "json"
    )  # fmt: skip
    assert result.exit_code == 1, result.stderr  # the jumpbox is still an orphan
    report = json.loads(result.stdout)
    assert by_name(report)["vm-orphan"]["reasons"] == ["owned-by-scheduler"]
    assert report["evidence"]["scheduler"] == SchedulerApi.reads

"""The command's contract: exit codes, evidence failures, leak checks, output, stdin."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from audit_helpers import (
    aws_instance,
    aws_instances,
    azure_vm,
    by_name,
    controller_home,
    make_repo,
    run_audit_cli,
    write_json,
)
from named_checks import broken


@pytest.fixture
def one_orphan(tmp_path):
    return write_json(
        tmp_path / "vms.json",
        [azure_vm("vm-orphan", tags={"task-id": "t-1", "repository-generation": "abcd" * 10})],
    )


def test_no_inventory_and_no_provider_is_a_usage_error():
    result = run_audit_cli()
    assert result.exit_code == 2
    assert "nothing to audit" in result.output


def test_a_controller_home_that_does_not_exist_is_75_not_0(tmp_path, one_orphan):
    result = run_audit_cli(
        "--inventory", str(one_orphan), "--controller-home", str(tmp_path / "missing")
    )
    assert result.exit_code == 75
    assert f"controller home {tmp_path / 'missing'}" in result.stderr
    # Without readable records nothing is called an orphan: the VM is unverified.
    assert "│ unverified" in result.stdout and "│ orphan" not in result.stdout


def test_a_repo_that_is_not_git_is_75(tmp_path, one_orphan):
    home = controller_home(tmp_path / "home", meta=["t-1"])
    plain = tmp_path / "plain"
    plain.mkdir()
    result = run_audit_cli(
        "--inventory",
        str(one_orphan),
        "--controller-home",
        str(home),
        "--repo",
        str(plain),
        "--format",
        "json",
    )
    assert result.exit_code == 75
    assert "not a git repository" in result.stderr
    finding = json.loads(result.stdout)["findings"][0]
    assert finding["checks"]["generation"] == "not-checked"


def test_evidence_not_supplied_is_reported_as_not_checked(one_orphan):
    result = run_audit_cli("--inventory", str(one_orphan), "--format", "json")
    assert result.exit_code == 1  # an unjudged fleet resource fails the audit
    report = json.loads(result.stdout)
    (finding,) = report["findings"]
    assert finding["verdict"] == "unverified"
    assert set(finding["checks"].values()) == {"not-checked", ""}
    assert all(v.startswith("not checked") for v in report["evidence"].values())


def test_an_audit_without_evidence_fails_unless_unverified_is_accepted_by_name(one_orphan):
    # A scheduled job that lost its evidence line must not go green.
    unjudged = run_audit_cli("--inventory", str(one_orphan))
    assert unjudged.exit_code == 1, broken(
        "an-unjudged-resource-fails-the-audit", f"exit {unjudged.exit_code} with no evidence"
    )
    assert "1 fleet resource unverified: no evidence source could judge them" in unjudged.stderr
    assert "--allow-unverified" in unjudged.stderr
    explicit = run_audit_cli("--inventory", str(one_orphan), "--fail-on", "unverified")
    assert explicit.exit_code == 1, broken(
        "an-unjudged-resource-fails-the-audit",
        f"exit {explicit.exit_code} with no evidence and --fail-on unverified",
    )
    # The control: accepted by name, the same audit passes, and the report says so.
    accepted = run_audit_cli("--inventory", str(one_orphan), "--allow-unverified", "-f", "json")
    assert accepted.exit_code == 0, accepted.stderr
    report = json.loads(accepted.stdout)
    assert report["policy"]["fail_on_unverified"] is False
    assert report["summary"]["by_verdict"]["unverified"] == 1


def test_a_repositorys_file_cannot_accept_unverified_resources_until_trusted(one_orphan):
    # A discovered file is whoever opened a pull request: without the operator's trust it
    # cannot make an audit without evidence pass (ignored, and said; the audit fails).
    Path("cloudguard.toml").write_text("[audit]\nallow-unverified = true\n")
    done = run_audit_cli("--inventory", str(one_orphan))
    assert done.exit_code == 1, "an untrusted file accepted unjudged resources"
    assert "ignored audit.allow-unverified" in done.stderr
    # The control: named on the command line (the operator's own act), it takes effect.
    named = run_audit_cli("--inventory", str(one_orphan), "--config", "cloudguard.toml")
    assert named.exit_code == 0, named.stderr


def test_leaked_by_reports_every_carrier_whatever_the_controller_says(tmp_path):
    vms = write_json(
        tmp_path / "az.json",
        [
            azure_vm("vm-known", tags={"task-id": "t-1", "Run-Id": "r42"}),
            azure_vm("vm-untagged-leak", tags={"run-id": "r42"}),
            azure_vm("vm-other-run", tags={"task-id": "t-1", "run-id": "r41"}),
        ],
    )
    ec2 = write_json(
        tmp_path / "ec2.json",
        aws_instances(
            aws_instance("i-1", tags={"run-id": "r42"}),
            aws_instance("i-2", tags={"Run-Id": "r42"}),  # EC2 keys are case-sensitive
        ),
    )
    home = controller_home(tmp_path / "home", meta=["t-1"])
    result = run_audit_cli(
        "--inventory",
        str(vms),
        "--inventory",
        str(ec2),
        "--controller-home",
        str(home),
        "--leaked-by",
        "run-id=r42",
        "--format",
        "json",
    )
    assert result.exit_code == 1, result.stderr
    verdicts = {name: f["verdict"] for name, f in by_name(json.loads(result.stdout)).items()}
    assert verdicts == {
        "vm-known": "leaked",
        "vm-untagged-leak": "leaked",
        "vm-other-run": "ok",
        "i-1": "leaked",
    }


def test_a_young_vm_with_a_fixture_id_is_an_orphan_not_pending(tmp_path):
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_x.py").write_text('ID = "fixture-7"\n')
    vms = write_json(
        tmp_path / "az.json",
        [
            azure_vm(
                "vm-young",
                tags={"task-id": "fixture-7"},
                created=datetime.now(UTC) - timedelta(minutes=1),
            )
        ],
    )
    home = controller_home(tmp_path / "home", meta=[])
    result = run_audit_cli(
        "--inventory", str(vms), "--controller-home", str(home), "--fixtures-from", str(tests)
    )
    assert result.exit_code == 1
    assert "orphan" in result.stdout


def test_grace_decides_pending(tmp_path):
    vms = write_json(
        tmp_path / "az.json",
        [azure_vm("vm-y", tags={"task-id": "t"}, created=datetime.now(UTC) - timedelta(hours=3))],
    )
    home = controller_home(tmp_path / "home", meta=[])
    args = ["--inventory", str(vms), "--controller-home", str(home)]
    assert run_audit_cli(*args).exit_code == 1
    assert run_audit_cli(*args, "--grace", "4h").exit_code == 0
    assert run_audit_cli(*args, "--grace", "soon").exit_code == 2
    # The same rule as in cloudguard.toml: a bare number has no unit, so it is refused.
    bare = run_audit_cli(*args, "--grace", "5")
    assert bare.exit_code == 2, f"a bare --grace 5 was accepted: exit {bare.exit_code}"
    assert "--grace" in bare.stderr


def test_output_file_and_stdin_inventory(tmp_path):
    out = tmp_path / "report.xml"
    text = json.dumps([azure_vm("vm-a", tags={"task-id": "t"})])
    result = run_audit_cli(
        "--inventory",
        "-",
        "--controller-home",
        str(controller_home(tmp_path / "home", meta=["t"])),
        "--format",
        "junit",
        "--output",
        str(out),
        stdin=text,
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert f"report written to {out}" in result.stderr
    assert ET.fromstring(out.read_text()).find("testsuite").get("tests") == "1"


def test_stdin_cannot_feed_two_sources(tmp_path):
    result = run_audit_cli("--inventory", "-", "--controller-records", "-", stdin="[]")
    assert result.exit_code == 2


def test_incident_through_controller_export_on_stdin(tmp_path):
    repo, shas = make_repo(tmp_path / "repo", {"tests/test_l.py": 'T = "cloud-noenv-c7"\n'})
    # The commit's first 7 digits and a different 8th: a short hash that is not this commit.
    not_a_commit = shas[0][:7] + ("1" if shas[0][7] == "0" else "0")
    vms = write_json(
        tmp_path / "az.json",
        [
            azure_vm(
                "vm-fm7c799d-wkr-01",
                tags={"task-id": "cloud-noenv-c7", "repository-generation": not_a_commit},
            ),
            azure_vm("vm-ok", tags={"task-id": "t-ok", "repository-generation": shas[0]}),
        ],
    )
    result = run_audit_cli(
        "--inventory",
        str(vms),
        "--controller-records",
        "-",
        "--repo",
        str(repo),
        "--format",
        "json",
        stdin=json.dumps({"tasks": [], "workers": [{"task": "t-ok"}]}),
    )
    assert result.exit_code == 1
    findings = by_name(json.loads(result.stdout))
    assert findings["vm-fm7c799d-wkr-01"]["reasons"] == [
        "no-controller-record",
        "fixture-task-id",
        "unknown-generation",
    ]
    assert findings["vm-ok"]["verdict"] == "ok"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_drawn_on_stderr_only_when_it_is_a_terminal(monkeypatch):
    from cloudguard.cli import audit as command

    quiet = io.StringIO()
    monkeypatch.setattr(command.sys, "stderr", quiet)
    with command._progress() as progress:
        progress("classify", 5, 10)
    assert quiet.getvalue() == ""

    terminal = _Terminal()
    monkeypatch.setattr(command.sys, "stderr", terminal)
    with command._progress() as progress:
        progress("classify", 5, 10)
    assert "classify" in terminal.getvalue()

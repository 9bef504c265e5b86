"""`--kind`: a real option (validation, help, config key), and every kind billed as its cloud
says, through the CLI on an `az resource list -o json` export."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pytest
from audit_helpers import (
    SUBSCRIPTION,
    by_name,
    controller_home,
    make_repo,
    run_audit_cli,
    write_json,
)
from named_checks import broken

GROUP = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/rg-ci"


def az_resource(arm_type: str, name: str, **extra: Any) -> dict[str, Any]:
    """One entry of `az resource list -o json`, as az prints it."""
    return {
        "id": f"{GROUP}/providers/{arm_type}/{name}",
        "name": name,
        "type": arm_type,
        "location": "westeurope",
        "resourceGroup": "rg-ci",
        "tags": {"ci-run": "77", "task-id": "t-77"},
        "createdTime": "2026-01-04T09:00:00.1234567+00:00",
        "changedTime": "2026-01-04T09:00:00.1234567+00:00",
        "provisioningState": "Succeeded",
        "managedBy": None,
        "sku": None,
        "kind": None,
        "identity": None,
        "plan": None,
        "properties": None,
        **extra,
    }


@pytest.fixture
def export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return write_json(
        tmp_path / "resources.json",
        [
            az_resource("Microsoft.Network/publicIPAddresses", "ip-1", sku={"name": "Standard"}),
            az_resource("Microsoft.Network/networkInterfaces", "nic-1"),
            az_resource("Microsoft.Storage/storageAccounts", "st1", sku={"name": "Standard_LRS"}),
            az_resource("Microsoft.Web/sites", "app-1"),
        ],
    )


def audit(export: Path, *extra: str) -> Any:
    return run_audit_cli("--inventory", str(export), "--leaked-by", "ci-run=77", *extra)


def test_kind_keeps_only_those_kinds_and_the_report_says_which(export: Path) -> None:
    done = audit(export, "--kind", "public-ip", "--kind", "Microsoft.Web/sites", "-f", "json")

    report = json.loads(done.stdout)
    names = {f["resource"]["name"] for f in report["findings"]}
    assert names == {"ip-1", "app-1"}, broken(
        "only-the-kinds-asked-for", f"a kind not asked for was audited: {names}"
    )
    assert report["policy"]["kinds"] == ["public-ip", "microsoft.web/sites"]
    assert report["summary"]["resources"] == 2  # other kinds are not counted at all
    assert done.exit_code == 1


def test_every_kind_is_billed_as_its_cloud_says_and_unknown_is_never_zero(export: Path) -> None:
    report = json.loads(audit(export, "-f", "json").stdout)
    billable = {f["resource"]["name"]: f["billable"] for f in report["findings"]}

    expected = {"ip-1": True, "nic-1": False, "st1": True, "app-1": None}
    assert billable == expected, broken(
        "each-kind-billed-as-its-cloud-says", f"a kind's billing was read wrong: {billable}"
    )
    summary = report["summary"]
    # The public IP is priced (offline: Standard static, per hour); the storage account bills
    # by usage, which has no hourly price.
    assert (summary["billable"], summary["unpriced_billable"], summary["billing_unknown"]) == (
        2,
        1,
        1,
    )
    assert summary["by_kind"] == {
        "public-ip": 1,
        "nic": 1,
        "storage-account": 1,
        "microsoft.web/sites": 1,
    }


@pytest.mark.parametrize("fmt", ["table", "markdown", "junit", "sarif", "html"])
def test_the_headline_of_every_format_says_how_many_billable_findings_are_unpriced(
    export: Path, fmt: str
) -> None:
    done = audit(export, "-f", fmt)

    assert "2 billable" in done.stdout, done.stdout
    assert "(1 of unknown price in neither sum" in done.stdout, broken(
        "the-headline-counts-the-unpriced",
        f"the headline does not say how many are unpriced: {done.stdout[:400]}",
    )
    assert "1 more of unknown billing" in done.stdout


@pytest.mark.parametrize("fmt", ["table", "markdown", "junit", "sarif", "html"])
def test_a_sum_of_only_unpriced_findings_is_unknown_never_zero_in_every_format(
    tmp_path: Path, fmt: str
) -> None:
    only_usage = write_json(
        tmp_path / "storage.json",
        [az_resource("Microsoft.Storage/storageAccounts", "st1", sku={"name": "Standard_LRS"})],
    )
    done = audit(only_usage, "-f", fmt)

    shown = html.unescape(done.stdout.replace("\\", ""))  # markdown escapes, HTML entities
    assert "1 billable: cost unknown (1 of unknown price in neither sum" in shown, broken(
        "an-unpriced-sum-is-unknown", f"the headline made a figure of nothing: {shown[:400]}"
    )
    assert "0.0000 USD/h" not in shown and "0.00 USD accrued" not in shown


@pytest.mark.parametrize("fmt", ["table", "markdown", "junit", "sarif", "html"])
def test_every_format_names_each_findings_kind(export: Path, fmt: str) -> None:
    done = audit(export, "-f", fmt)

    shown = done.stdout.lower().replace("\\", "")  # markdown escapes the punctuation
    for kind in ("public-ip", "nic", "storage-account", "microsoft.web/sites"):
        assert kind in shown, f"the {fmt} report does not name the kind {kind}"


def test_junit_says_no_power_state_for_a_kind_that_has_none(export: Path) -> None:
    done = audit(export, "-f", "junit")

    assert "app-1" in done.stdout and "power state unknown" not in done.stdout, done.stdout
    assert "microsoft.web/sites; task id" in done.stdout.lower()


def test_an_unknown_kind_is_a_usage_error_on_the_command_line_and_97_in_the_config(
    export: Path, tmp_path: Path
) -> None:
    done = audit(export, "--kind", "vms")
    assert done.exit_code == 2, broken(
        "an-unknown-kind-is-refused", f"--kind vms was accepted: {done.output[:300]}"
    )
    assert "unknown kind 'vms'" in done.output

    (tmp_path / "cloudguard.toml").write_text('[audit]\nkind = ["public-ip", "clusters"]\n')
    done = audit(export)
    assert done.exit_code == 97 and "audit.kind" in done.output
    assert "unknown kind 'clusters'" in done.output


def test_kind_is_a_config_key_and_in_the_help(export: Path, tmp_path: Path) -> None:
    (tmp_path / "cloudguard.toml").write_text('[audit]\nkind = ["nic"]\n')
    report = json.loads(audit(export, "-f", "json").stdout)
    assert [f["resource"]["name"] for f in report["findings"]] == ["nic-1"]

    help_text = run_audit_cli("--help").stdout
    assert "--kind" in help_text and "public-ip" in help_text


def test_only_the_kinds_that_must_carry_a_generation_are_suspect_without_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As a Terraform module tags them: the task id alone, and the controller knows the task.
    monkeypatch.chdir(tmp_path)
    repo, _ = make_repo(tmp_path / "repo", {"tests/test_x.py": "def test_x(): pass\n"})
    home = controller_home(tmp_path / "home", meta=["t-77"])
    vm = az_resource("Microsoft.Compute/virtualMachines", "vm-1")
    export = write_json(
        tmp_path / "resources.json",
        [
            vm,
            az_resource("Microsoft.Network/networkInterfaces", "nic-1"),
            az_resource("Microsoft.Compute/disks", "disk-1", sku={"name": "Premium_LRS"}),
            az_resource("Microsoft.Network/publicIPAddresses", "ip-1", sku={"name": "Standard"}),
        ],
    )
    evidence = ("--controller-home", str(home), "--repo", str(repo), "-f", "json")

    done = run_audit_cli("--inventory", str(export), *evidence, "--fail-on", "suspect")
    found = by_name(json.loads(done.stdout))
    verdicts = {name: finding["verdict"] for name, finding in found.items()}
    assert verdicts == {"vm-1": "suspect", "nic-1": "ok", "disk-1": "ok", "ip-1": "ok"}, broken(
        "a-kind-not-required-is-not-suspect", f"verdicts without a generation tag: {verdicts}"
    )
    assert found["disk-1"]["reasons"] == [] and found["vm-1"]["reasons"] == ["unknown-generation"]
    assert found["disk-1"]["checks"]["generation"] == "no-tag"
    assert json.loads(done.stdout)["policy"]["require_generation"] == ["vm"]

    asked = run_audit_cli("--inventory", str(export), *evidence, "--require-generation", "disk")
    verdicts = {name: f["verdict"] for name, f in by_name(json.loads(asked.stdout)).items()}
    assert verdicts == {"vm-1": "ok", "nic-1": "ok", "disk-1": "suspect", "ip-1": "ok"}, broken(
        "the-operator-requires-it-of-a-kind",
        f"--require-generation disk did not apply: {verdicts}",
    )

    (tmp_path / "cloudguard.toml").write_text('[audit]\nrequire-generation = ["vms"]\n')
    refused = run_audit_cli("--inventory", str(export), *evidence)
    assert refused.exit_code == 97 and "unknown kind 'vms'" in refused.output, refused.output

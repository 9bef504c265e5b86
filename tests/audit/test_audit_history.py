"""A scheduled audit remembers and tells: what is new, still there, gone and back; whose
acknowledgement covers a finding; `--fail-on new`; a store that cannot be used.

Each test runs `cloudguard audit` in-process night after night on exports that
change between nights, with its own history store (the root conftest gives
every test its own $XDG_STATE_HOME).
"""

from __future__ import annotations

import json
import os
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from audit_helpers import azure_vm, controller_home, run_audit_cli, write_json
from cli.cli_helpers import cloudguard
from named_checks import broken
from trusted_config import write_trusted

from cloudguard.audit.formats.markdown import cell

NOW = datetime.now(UTC)
ORPHAN_TAGS = {"task-id": "cloud-noenv-c7"}


@pytest.fixture
def night(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """`night(*names)`: audit a subscription holding those VMs (each an orphan but vm-ok),
    as JSON; returns (exit code, report, stderr)."""
    monkeypatch.chdir(tmp_path)
    home = controller_home(tmp_path / "controller", meta=["task-0042"])

    def audit(*names: str, args: tuple[str, ...] = ()) -> tuple[int, dict[str, Any], str]:
        vms = [
            azure_vm(name, tags={"task-id": "task-0042"} if name == "vm-ok" else ORPHAN_TAGS)
            for name in names
        ]
        write_json(tmp_path / "vms.json", vms)
        result = run_audit_cli(
            "-i", "vms.json", "--controller-home", str(home), "-f", "json", *args
        )
        report = json.loads(result.stdout) if result.stdout.startswith("{") else {}
        return result.exit_code, report, result.stderr

    return audit


def changes(report: dict[str, Any]) -> dict[str, str]:
    return {f["resource"]["name"]: f["history"]["change"] for f in report["findings"]}


def test_each_audit_says_what_is_new_still_there_gone_and_back(night: Any) -> None:
    code, first, _ = night("vm-a", "vm-b", "vm-ok")
    assert code == 1
    assert changes(first) == {"vm-a": "new", "vm-b": "new", "vm-ok": "new"}
    assert first["history"]["previous_audit"] is None

    _, second, _ = night("vm-a", "vm-ok", "vm-c")
    assert changes(second) == {"vm-a": "still", "vm-ok": "still", "vm-c": "new"}
    (gone,) = second["history"]["gone"]
    assert (gone["name"], gone["how"], gone["last_verdict"]) == ("vm-b", "vanished", "orphan")
    assert second["history"]["summary"] == {"new": 1, "still": 2, "back": 0, "gone": 1}
    a = next(f for f in second["findings"] if f["resource"]["name"] == "vm-a")
    assert a["history"]["first_seen"] == first["findings"][0]["history"]["first_seen"]

    _, third, _ = night("vm-a", "vm-b", "vm-ok", "vm-c")
    assert changes(third)["vm-b"] == "back"
    assert third["history"]["gone"] == []


def test_the_human_formats_say_it_too(night: Any, tmp_path: Path) -> None:
    night("vm-a", "vm-b", "vm-ok")
    night("vm-a", "vm-ok", args=("--report", f"markdown={tmp_path / 'r.md'}",
                                 "--report", f"table={tmp_path / 'r.txt'}"))  # fmt: skip
    markdown = (tmp_path / "r.md").read_text()
    assert cell("since the last audit: 0 new, 0 back again, 2 still there, 1 gone") in markdown
    assert "| since the last audit |" in markdown
    assert cell("gone (vanished): vm-b") in markdown
    table = (tmp_path / "r.txt").read_text()
    assert "still there since " in table and "gone (vanished): vm-b" in table


def test_fail_on_new_fails_only_on_what_is_new(night: Any) -> None:
    new = ("--fail-on", "new")
    assert night("vm-a", "vm-ok", args=new)[0] == 1, "the first audit: everything is new"
    code, report, stderr = night("vm-a", "vm-ok", args=new)
    assert report["policy"]["fail_on"] == "new", f"the audit reported no policy: {stderr}"
    assert report["exit_code"] == 0, broken(
        "fail-on-new-passes-the-old", "vm-a was already there and failing: it is not new"
    )
    assert code == 0
    assert night("vm-a", "vm-ok", "vm-c", args=new)[0] == 1, "vm-c is new"
    assert night("vm-a", "vm-ok", "vm-c")[0] == 1, "the control: without it, vm-a fails"


def test_fail_on_new_needs_the_history(night: Any) -> None:
    code, _, stderr = night("vm-a", args=("--fail-on", "new", "--no-history"))
    assert code == 2 and "--fail-on new needs the history" in stderr


def test_without_the_history_nothing_is_called_new(night: Any) -> None:
    code, report, _ = night("vm-a", args=("--no-history",))
    assert code == 1
    assert report["history"] is None and report["findings"][0]["history"] is None
    assert not (Path(os.environ["XDG_STATE_HOME"]) / "cloudguard").exists(), "nothing recorded"


def _ack_file(path: Path, name: str, until: date, owner: str = "platform-team") -> Path:
    vm = azure_vm(name, tags=None)["id"]
    path.write_text(
        f'[[ack]]\nid = "{vm.lower()}"\nowner = "{owner}"\n'
        f'reason = "kept for the demo"\nuntil = {until.isoformat()}\n'
    )
    return path


def test_an_acknowledged_orphan_is_shown_and_fails_nothing_until_it_expires(
    night: Any, tmp_path: Path
) -> None:
    live = _ack_file(tmp_path / "acks.toml", "vm-a", NOW.date() + timedelta(days=30))
    code, report, stderr = night("vm-a", "vm-ok", args=("--acks", str(live)))
    assert report["summary"]["acknowledged"] == 1, f"vm-a is acknowledged: {stderr}"
    assert report["exit_code"] == 0, broken(
        "an-acknowledged-finding-fails-nothing",
        "vm-a is acknowledged (ARM ids compared case-insensitively)",
    )
    assert code == 0
    a = report["findings"][0]
    assert a["verdict"] == "orphan", "never hidden: still an orphan, in the report"
    assert a["acknowledgement"]["owner"] == "platform-team" and not a["acknowledgement"]["expired"]
    assert report["summary"]["acknowledged"] == 1

    lapsed = _ack_file(tmp_path / "acks.toml", "vm-a", NOW.date() - timedelta(days=1))
    code, report, _ = night("vm-a", "vm-ok", args=("--acks", str(lapsed)))
    assert code == 1, "loud again once it expired"
    assert report["findings"][0]["acknowledgement"]["expired"] is True
    assert report["summary"]["acknowledgement_expired"] == 1


def test_an_acknowledgement_made_with_cloudguard_ack_counts_as_the_files(
    night: Any, tmp_path: Path
) -> None:
    vm = azure_vm("vm-a", tags=None)["id"]
    until = (NOW.date() + timedelta(days=7)).isoformat()
    done = cloudguard("ack", vm, "--reason", "load test", "--until", until, "--owner", "alice")
    assert done.exit_code == 0, done.output
    code, report, _ = night("vm-a", "vm-b")
    assert code == 1, "vm-b is not acknowledged"
    by_name = {f["resource"]["name"]: f["acknowledgement"] for f in report["findings"]}
    assert by_name["vm-a"]["owner"] == "alice" and by_name["vm-b"] is None
    assert cloudguard("ack", vm, "--revoke").exit_code == 0
    _, report, _ = night("vm-a")
    assert report["findings"][0]["acknowledgement"] is None


def test_a_bad_acknowledgements_file_is_97_naming_it(night: Any, tmp_path: Path) -> None:
    bad = tmp_path / "acks.toml"
    bad.write_text('[[ack]]\nid = "x"\nowner = "o"\nuntil = 2030-01-01\n')
    code, _, stderr = night("vm-a", args=("--acks", str(bad)))
    assert code == 97 and f"{bad}: ack #1: missing 'reason'" in stderr


def test_a_store_that_cannot_be_used_is_75_before_anything_is_swept(
    night: Any, tmp_path: Path
) -> None:
    store = tmp_path / "history.sqlite3"
    store.write_bytes(b"not a database" * 100)
    write_trusted(tmp_path / "cloudguard.toml", f'[history]\npath = "{store}"\n')
    code, report, stderr = night("vm-a")
    assert code == 75 and report == {}, "no report: nothing was swept"
    assert f"history store {store}: damaged or not a database" in stderr
    assert night("vm-a", args=("--no-history",))[0] == 1, "the control: without the history"


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ('[history]\nurl = "mysql://db/h"\n', "history.url: expected a postgresql:// or"),
        ('[history]\npath = "a.db"\nurl = "postgresql://db/h"\n', "url and path: give one of"),
        ('[history]\nbusy-timeout = 5\n', "history.busy-timeout: a bare number"),
        ("[history]\nstore = 'x'\n", "history.store: unknown key"),
        ('[notify]\nwebhook = [{ kind = "email", url-env = "X" }]\n', "kind: 'email' is not"),
        ('[notify]\nwebhook = [{ kind = "slack" }]\n', "give url-env"),
        ('[notify]\nwebhook = [{ kind = "json", url = "http://example.com/h" }]\n', "https://"),
        ("[notify]\nfatal = 'yes'\n", "notify.fatal: expected true or false"),
    ],
)  # fmt: skip
def test_a_bad_history_or_notify_table_is_97_naming_it(
    night: Any, tmp_path: Path, table: str, named: str
) -> None:
    write_trusted(tmp_path / "cloudguard.toml", table)
    code, _, stderr = night("vm-a")
    assert code == 97, stderr
    assert named in stderr


def test_the_scope_keeps_apart_audits_of_different_things(night: Any, tmp_path: Path) -> None:
    night("vm-a", "vm-b")
    write_trusted(tmp_path / "cloudguard.toml", '[history]\nscope = "staging"\n')
    _, report, _ = night("vm-a")
    assert report["history"]["scope"] == "staging"
    assert report["history"]["gone"] == [], "vm-b was last seen by another scope's audit"
    assert changes(report) == {"vm-a": "still"}, "known, whoever saw it"


def test_reap_plan_leaves_an_acknowledged_orphan_alone(night: Any, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from cloudguard.cli.reap import app as reap_app

    acks = _ack_file(tmp_path / "acks.toml", "vm-a", NOW.date() + timedelta(days=30))
    _, report, _ = night("vm-a", "vm-b", args=("--acks", str(acks)))
    (tmp_path / "audit.json").write_text(json.dumps(report))
    done = CliRunner().invoke(reap_app, ["plan", str(tmp_path / "audit.json")])
    assert done.exit_code == 0, done.output
    plan = json.loads(done.stdout)
    planned = [item["name"] for item in plan["items"]]
    assert planned == ["vm-b"], broken(
        "an-acknowledged-orphan-is-not-planned", f"planned {planned}: vm-a is acknowledged"
    )
    (left,) = plan["not_planned"]
    assert left["name"] == "vm-a" and "acknowledged by platform-team until" in left["why"]
    # A version 1 report knew no acknowledgements: the same findings, both planned.
    old = {**report, "schema_version": 1}
    old["findings"] = [{k: v for k, v in f.items() if k != "acknowledgement"} for f in report[
        "findings"]]  # fmt: skip
    (tmp_path / "v1.json").write_text(json.dumps(old))
    done = CliRunner().invoke(reap_app, ["plan", str(tmp_path / "v1.json")])
    assert sorted(item["name"] for item in json.loads(done.stdout)["items"]) == ["vm-a", "vm-b"]


def test_an_untrusted_file_cannot_send_findings_anywhere(night: Any, tmp_path: Path) -> None:
    # A repository's cloudguard.toml is not the operator's consent: where findings go (a
    # database, webhooks) and what is acknowledged take effect only from a trusted file.
    toml = tmp_path / "cloudguard.toml"
    toml.write_text('[history]\nurl = "postgresql://audit@db.example/h"\n')
    code, _, stderr = night("vm-a")
    assert code == 97 and "history.url (sends every finding to this database)" in stderr
    toml.write_text('[[notify.webhook]]\nkind = "json"\nurl = "https://relay.example/h"\n')
    code, _, stderr = night("vm-a")
    assert code == 1 and "ignored notify.webhook" in stderr, "ignored, and said so"
    assert "notified" not in stderr
    write_trusted(toml, toml.read_text())
    # The control: trusted, the webhook is taken (vm-a is no news now: nothing is sent).
    assert "nothing new to notify" in night("vm-a")[2]


def test_every_kind_is_remembered_acknowledged_and_held_out_of_a_group_delete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not only VMs: a public IP, a storage account and their resource group are each
    remembered by identity, an acknowledged IP keeps its group from being deleted whole,
    and what went is told with its kind."""
    from test_audit_kinds import GROUP, az_resource
    from typer.testing import CliRunner

    from cloudguard.cli.reap import app as reap_app

    monkeypatch.chdir(tmp_path)
    ip = az_resource("Microsoft.Network/publicIPAddresses", "ip-1", sku={"name": "Standard"})
    storage = az_resource("Microsoft.Storage/storageAccounts", "st1", sku={"name": "Standard_LRS"})
    group = {"id": GROUP, "name": "rg-ci", "type": "Microsoft.Resources/resourceGroups",
             "location": "westeurope", "tags": {"ci-run": "77", "task-id": "t-77"},
             "managedBy": None, "properties": {"provisioningState": "Succeeded"}}  # fmt: skip
    acks = tmp_path / "acks.toml"
    acks.write_text(
        f'[[ack]]\nid = "{ip["id"].lower()}"\nowner = "net-team"\nreason = "kept"\n'
        f"until = {(NOW.date() + timedelta(days=30)).isoformat()}\n"
    )

    def audit(*resources: dict[str, Any]) -> dict[str, Any]:
        write_json(tmp_path / "resources.json", list(resources))
        done = run_audit_cli(
            "-i", "resources.json", "--leaked-by", "ci-run=77", "-f", "json", "--acks", str(acks)
        )
        return dict(json.loads(done.stdout))

    first = audit(ip, storage, group)
    found = {f["resource"]["name"]: f for f in first["findings"]}
    assert {name: f["history"]["change"] for name, f in found.items()} == dict.fromkeys(
        ("ip-1", "st1", "rg-ci"), "new"
    )
    assert found["ip-1"]["acknowledgement"]["owner"] == "net-team"
    assert found["st1"]["acknowledgement"] is None

    (tmp_path / "audit.json").write_text(json.dumps(first))
    done = CliRunner().invoke(
        reap_app, ["plan", "audit.json", "--action", "delete", "--delete-data", "storage-account"]
    )
    assert done.exit_code == 0, done.output
    plan = json.loads(done.stdout)
    planned = [item["name"] for item in plan["items"]]
    assert planned == ["st1"], broken(
        "an-acknowledged-member-holds-its-group", f"planned {planned}: the group went whole"
    )
    why = {left["name"]: left["why"] for left in plan["not_planned"]}
    assert "acknowledged by net-team" in why["ip-1"]
    assert "holds public-ip ip-1" in why["rg-ci"], why

    second = audit(ip, group)  # the storage account went
    gone = [(g["name"], g["kind"]) for g in second["history"]["gone"]]
    assert gone == [("st1", "storage-account")]

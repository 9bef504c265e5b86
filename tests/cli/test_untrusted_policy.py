"""Whose policy it is, always said (issue 36): a repository's file describing the fleet.

A discovered cloudguard.toml nobody trusted may still describe the project's
fleet (its tag names, grace, kinds, where its evidence lives): those keys
apply, since ignoring them would judge another fleet, but each can hide a
finding, so every report format's head and the reap plan name the file and
each key that applied. A key that widens an action (`leaked-by`: what reaping
deletes) does not apply from it, said in one line naming the file and the key.
`--config FILE` is the operator's own act, so it must be their own file: one
others can write, or another user's, is refused (97) before any key of it runs.
Each test has a trust store of its own (the root conftest's XDG_STATE_HOME).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from named_checks import broken
from second_uid import OTHER_UID, require_a_second_user

from cloudguard import trust_store as trust

NOW = "2026-01-01T00:00:00+00:00"
FLEET_VM = {
    "id": "/subscriptions/s/resourceGroups/pilot/providers/Microsoft.Compute/virtualMachines/vm-1",
    "name": "vm-1",
    "location": "eastus",
    "resourceGroup": "pilot",
    "hardwareProfile": {"vmSize": "Standard_D4as_v6"},
    "powerState": "VM running",
    "tags": {"task-id": "t-dead"},
    "timeCreated": NOW,
}
# Not the fleet's: only a `leaked-by = ["owner=ops"]` makes it a reap candidate.
BASTION = {
    **FLEET_VM,
    "id": FLEET_VM["id"].replace("vm-1", "ops-bastion"),
    "name": "ops-bastion",
    "tags": {"owner": "ops"},
}
FORMATS = ("table", "json", "markdown", "junit", "sarif", "html")


def cloudguard(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cloudguard", *args],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "300"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def clone(tmp_path: Path, body: str) -> tuple[Path, Path]:
    """A clone holding `body` as its cloudguard.toml, a controller home that knows no task
    (so the fleet VM is an orphan) and an inventory of the VM and an ops bastion."""
    repo = tmp_path / "clone"
    (repo / ".git").mkdir(parents=True)
    (repo / "home" / "state").mkdir(parents=True)
    (repo / "vms.json").write_text(json.dumps([FLEET_VM, BASTION]))
    config = repo / "cloudguard.toml"
    config.write_text('[audit]\ninventory = ["vms.json"]\ncontroller-home = "home"\n' + body)
    config.chmod(0o644)
    return repo, config


def readable(text: str) -> str:
    """A report's text as read: markdown's escapes and HTML's entities undone."""
    return re.sub(r"\\(.)", r"\1", text.replace("&#x27;", "'").replace("&quot;", '"'))


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_report_head_names_the_untrusted_file_and_its_keys(tmp_path: Path, fmt: str) -> None:
    repo, config = clone(tmp_path, 'task-tag = "not-our-tag"\ngrace = "3650d"\n')

    done = cloudguard("audit", "--no-history", "--format", fmt, cwd=repo)

    assert done.returncode == 0, done.stderr  # the file's tag hides the orphan: it applied
    head = readable(done.stdout)
    named = f"{config}" in head and "audit.task-tag" in head and "audit.grace" in head
    assert named, broken(
        "the-report-names-whose-policy", f"{fmt}: the untrusted file's keys are unsaid: {head}"
    )
    assert "audit.controller-home" in head  # an evidence location vouches: named too
    assert f"cloudguard trust {config}" in done.stderr, done.stderr


def test_the_json_head_carries_the_file_and_keys_and_a_trusted_file_none(tmp_path: Path) -> None:
    repo, config = clone(tmp_path, 'task-tag = "not-our-tag"\n')

    untrusted = json.loads(cloudguard("audit", "--no-history", "-f", "json", cwd=repo).stdout)
    trust.trust(config, trust.digest(config.read_bytes()))
    trusted = cloudguard("audit", "--no-history", "-f", "json", cwd=repo)

    assert untrusted["policy"]["untrusted_file"] == {
        "path": str(config),
        "keys": ["audit.controller-home", "audit.task-tag"],
    }
    assert json.loads(trusted.stdout)["policy"]["untrusted_file"] is None
    assert "Policy from an untrusted file" not in trusted.stdout
    assert "not trusted" not in trusted.stderr, trusted.stderr


def test_a_key_the_command_line_sets_is_the_operators_not_named(tmp_path: Path) -> None:
    repo, _ = clone(tmp_path, 'task-tag = "not-our-tag"\n')

    done = cloudguard(
        "audit", "--no-history", "-f", "json", "--task-tag", "task-id", "--controller-home",
        "home", cwd=repo,
    )  # fmt: skip

    assert done.returncode == 1, done.stderr  # the operator's tag: the orphan is found
    assert json.loads(done.stdout)["policy"]["untrusted_file"] is None


def test_an_untrusted_leaked_by_is_ignored_and_the_bastion_never_planned(tmp_path: Path) -> None:
    repo, config = clone(tmp_path, 'leaked-by = ["owner=ops"]\n')
    report = tmp_path / "audit.json"

    done = cloudguard("audit", "--no-history", "-f", "json", "-o", str(report), cwd=repo)
    plan = cloudguard("reap", "plan", str(report), cwd=repo)

    planned = [item["name"] for item in json.loads(plan.stdout)["items"]]
    assert "ops-bastion" not in planned, broken(
        "an-untrusted-leaked-by-is-ignored", f"an untrusted file planned {planned} for reaping"
    )
    assert planned == ["vm-1"], plan.stderr
    ignored = [line for line in done.stderr.splitlines() if "ignored audit.leaked-by" in line]
    assert len(ignored) == 1 and str(config) in ignored[0], done.stderr
    # Trusted, the same file's leaked-by applies: the control that it could be planned.
    trust.trust(config, trust.digest(config.read_bytes()))
    cloudguard("audit", "--no-history", "-f", "json", "-o", str(report), cwd=repo)
    replanned = json.loads(cloudguard("reap", "plan", str(report), cwd=repo).stdout)
    assert sorted(item["name"] for item in replanned["items"]) == ["ops-bastion", "vm-1"]


def test_the_plan_names_the_untrusted_file_and_its_keys(tmp_path: Path) -> None:
    repo, config = clone(tmp_path, 'region = ["eastus"]\n')
    report = tmp_path / "audit.json"
    cloudguard("audit", "--no-history", "-f", "json", "-o", str(report), cwd=repo)

    plan = cloudguard("reap", "plan", str(report), cwd=repo)

    assert plan.returncode == 0, plan.stderr
    whose = json.loads(plan.stdout)["policy"].get("untrusted_file")
    keys = ["audit.controller-home", "audit.region"]
    assert whose == {"path": str(config), "keys": keys}, broken(
        "the-plan-names-whose-policy", f"the plan does not say whose policy it was: {whose}"
    )
    assert f"{config} (discovered, not trusted) set {', '.join(keys)}" in plan.stderr


@pytest.mark.parametrize("whose", ["writable by others", "another user's"])
def test_a_config_file_that_is_not_yours_alone_is_refused(tmp_path: Path, whose: str) -> None:
    marker = tmp_path / "ran"
    script = f"open({str(marker)!r}, 'w').close()"
    repo, _ = clone(tmp_path, "")
    shared = tmp_path / "shared.toml"
    shared.write_text(
        f"[audit]\ninventory = [{json.dumps(str(repo / 'vms.json'))}]\n"
        f"owned-ids-command = [{json.dumps(sys.executable)}, '-c', {json.dumps(script)}]\n"
    )
    if whose == "writable by others":
        shared.chmod(0o646)
    else:
        require_a_second_user()
        shared.chmod(0o644)
        os.chown(shared, OTHER_UID, OTHER_UID)

    done = cloudguard("audit", "--no-history", "-c", str(shared), cwd=repo)

    assert done.returncode == 97 and not marker.exists(), broken(
        "a-config-not-yours-is-refused", f"-c took a file {whose}: {done.returncode}"
    )
    why = "writable by group or others" if whose == "writable by others" else "owned by uid"
    assert f"{shared}: {why}" in done.stderr, done.stderr
    # The same file, the operator's own and private: its command runs (the control).
    os.chown(shared, os.geteuid(), os.getegid())
    shared.chmod(0o600)
    cloudguard("audit", "--no-history", "-c", str(shared), cwd=repo)
    assert marker.exists()

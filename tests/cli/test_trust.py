"""A repository's file is not the operator's consent (issue 20): `cloudguard trust`.

A cloudguard.toml that cloudguard finds on its own is written by whoever can
open a pull request. The keys that run a program, open the seal or widen what
is trusted take effect from it only once the operator trusted those exact
bytes (`cloudguard trust`, recorded in the user's own state); an edit makes
it untrusted again; a file named on the command line is the operator's act.
Each test has a trust store of its own (the root conftest's XDG_STATE_HOME).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from named_checks import broken

from cloudguard import trust_store as trust
from cloudguard.guard.seal_registry import load_registry

# One fleet VM, so the owned-ids command is asked.
VM = {
    "id": "/subscriptions/s/resourceGroups/pilot/providers/Microsoft.Compute/virtualMachines/vm-1",
    "name": "vm-1",
    "location": "eastus",
    "resourceGroup": "pilot",
    "hardwareProfile": {"vmSize": "Standard_D4as_v6"},
    "powerState": "VM running",
    "tags": {"task-id": "t-1"},
    "timeCreated": "2026-01-01T00:00:00+00:00",
}


def cloudguard(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cloudguard", *args],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "300"},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def repository(tmp_path: Path, body: str) -> tuple[Path, Path]:
    """A clone holding `body` as its cloudguard.toml (the operator's own file, as every
    file of a clone is) and an inventory of one fleet VM."""
    repo = tmp_path / "clone"
    (repo / ".git").mkdir(parents=True)
    (repo / "vms.json").write_text(json.dumps([VM]))
    config = repo / "cloudguard.toml"
    config.write_text(body)
    config.chmod(0o644)
    return repo, config


def marker_command(marker: Path) -> str:
    """`owned-ids-command` that leaves `marker` behind when it runs (and owns nothing)."""
    script = f"open({str(marker)!r}, 'w').close()"
    return f"owned-ids-command = [{json.dumps(sys.executable)}, '-c', {json.dumps(script)}]\n"


def test_a_committed_command_does_not_run_until_the_operator_trusts_the_file(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "the-command-ran"
    repo, config = repository(tmp_path, "[audit]\n" + marker_command(marker))

    refused = cloudguard("audit", "--inventory", "vms.json", cwd=repo)

    assert not marker.exists(), broken(
        "an-untrusted-command-never-runs", "a discovered file ran its owned-ids-command untrusted"
    )
    assert refused.returncode == 97, refused.stderr
    assert "audit.owned-ids-command (runs a program" in refused.stderr, refused.stderr
    assert f"run `cloudguard trust {config}`" in refused.stderr, refused.stderr

    trusted = cloudguard("trust", cwd=repo)
    assert trusted.returncode == 0, trusted.stderr
    assert "it may now set audit.owned-ids-command" in trusted.stdout, trusted.stdout
    ran = cloudguard("audit", "--inventory", "vms.json", cwd=repo)
    assert marker.exists(), f"the trusted file's command did not run: {ran.stderr}"

    marker.unlink()
    config.write_text(config.read_text() + "# edited by a pull request\n")
    edited = cloudguard("audit", "--inventory", "vms.json", cwd=repo)
    assert edited.returncode == 97 and not marker.exists(), broken(
        "an-edited-file-loses-its-trust", "an edited file stayed trusted"
    )


def test_a_file_named_on_the_command_line_is_the_operators_act(tmp_path: Path) -> None:
    marker = tmp_path / "the-command-ran"
    _, config = repository(tmp_path, "[audit]\n" + marker_command(marker))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    done = cloudguard("audit", "--inventory", str(config.parent / "vms.json"),
                      "--config", str(config), cwd=elsewhere)  # fmt: skip

    assert marker.exists(), f"--config's command did not run: {done.stderr}"


@pytest.mark.parametrize(
    ("key", "says"),
    [
        ('management-endpoint = "https://attacker.example"', "audit.management-endpoint"),
        ('credential = "cli"', "audit.credential"),
        ('ca-bundle = "ca.pem"', "audit.ca-bundle"),
        ('provider = ["aws"]', "audit.provider"),
        ("all-subscriptions = true", "audit.all-subscriptions"),
        ('repo = "."', "audit.repo"),
    ],
)
def test_keys_that_send_credentials_or_widen_the_sweep_are_refused_untrusted(
    tmp_path: Path, key: str, says: str
) -> None:
    repo, _config = repository(tmp_path, f"[audit]\n{key}\n")
    (repo / "ca.pem").write_text("")  # a file the key may name: refused for trust, not absence

    done = cloudguard("audit", "--inventory", "vms.json", cwd=repo)

    assert done.returncode == 97, f"{key} took effect from an untrusted file: {done.stderr}"
    assert says in done.stderr and "cloudguard trust" in done.stderr, done.stderr


def test_reap_accounts_need_trust_too(tmp_path: Path) -> None:
    repo, _config = repository(tmp_path, '[reap]\naccounts = ["123456789012"]\n')
    (repo / "plan.json").write_text("{}")

    done = cloudguard("reap", "apply", "plan.json", cwd=repo)

    assert done.returncode == 97, done.stderr
    assert "reap.accounts (chooses the subscriptions" in done.stderr, done.stderr


def test_an_untrusted_output_is_ignored_and_said_the_report_goes_to_stdout(
    tmp_path: Path,
) -> None:
    victim = tmp_path / "victims-file"
    victim.write_text("precious\n")
    repo, config = repository(tmp_path, f'[audit]\nformat = "json"\noutput = "{victim}"\n')

    done = cloudguard("audit", "--inventory", "vms.json", cwd=repo)

    assert victim.read_text() == "precious\n", broken(
        "an-untrusted-output-is-ignored", "an untrusted file chose which file to overwrite"
    )
    assert f"{config}: ignored audit.output" in done.stderr, done.stderr
    assert json.loads(done.stdout)["schema"] == "cloudguard.audit"  # format: harmless, kept


def test_hard_forward_of_an_untrusted_file_is_ignored_and_named(tmp_path: Path) -> None:
    repo, config = repository(tmp_path, "[hard]\nforward = [9999]\n")

    untrusted = load_registry(search_from=repo)
    trust.trust(config, trust.digest(config.read_bytes()))
    trusted = load_registry(search_from=repo)

    assert untrusted.forward_ports == (), broken(
        "an-untrusted-forward-is-ignored", "an untrusted file opened the hard seal"
    )
    assert untrusted.ignored and "ignored hard.forward" in untrusted.ignored[0]
    assert f"cloudguard trust {config}" in untrusted.ignored[0]
    assert trusted.forward_ports == (9999,) and trusted.ignored == ()
    named = load_registry(config)
    assert named.forward_ports == (9999,), "--registry FILE is the operator's act"


def test_harmless_keys_take_effect_untrusted(tmp_path: Path) -> None:
    repo, _ = repository(
        tmp_path,
        # (task-tag, grace and the like apply too, and are named: test_untrusted_policy.py)
        '[seal.names]\nVAULT_TOKEN = "a secret store"\n[audit]\nformat = "json"\n'
        "concurrency = 2\nretries = 3\n",
    )

    done = cloudguard("audit", "--inventory", "vms.json", cwd=repo)

    assert "VAULT_TOKEN" in load_registry(search_from=repo).names
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(done.stdout)["schema"] == "cloudguard.audit"
    assert "ignored" not in done.stderr and "trust" not in done.stderr, done.stderr


def test_trust_list_and_revoke(tmp_path: Path) -> None:
    repo, config = repository(tmp_path, "[audit]\nowned-ids-command = ['true']\n")

    assert cloudguard("trust", cwd=repo).returncode == 0
    listed = cloudguard("trust", "--list", cwd=repo)
    assert listed.stdout.startswith("trusted\t") and str(config) in listed.stdout
    config.write_text(config.read_text() + "# edit\n")
    assert cloudguard("trust", "--list", cwd=repo).stdout.startswith("changed\t")
    revoked = cloudguard("trust", "--revoke", cwd=repo)
    assert revoked.returncode == 0 and f"revoked: {config}" in revoked.stdout
    assert "no trusted files" in cloudguard("trust", "--list", cwd=repo).stdout


def test_trust_pinned_to_a_digest_refuses_any_other_content(tmp_path: Path) -> None:
    repo, config = repository(tmp_path, "[audit]\nowned-ids-command = ['true']\n")
    reviewed = trust.digest(config.read_bytes())
    config.write_text("[audit]\nowned-ids-command = ['sh', '-c', 'evil']\n")

    pinned = cloudguard("trust", "--sha256", reviewed, cwd=repo)

    assert pinned.returncode == 97 and "not the pinned" in pinned.stderr, pinned.stderr
    assert trust.read_store() == {}


def test_the_store_is_the_users_alone(tmp_path: Path) -> None:
    repo, _config = repository(tmp_path, "[audit]\nowned-ids-command = ['true']\n")
    assert cloudguard("trust", cwd=repo).returncode == 0
    store = trust.store_path()

    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.parent.stat().st_mode) == 0o700
    assert list(store.parent.glob(".trusted-*")) == [], "a temporary file was left behind"
    store.chmod(0o666)  # anyone could now trust a file in the user's name
    done = cloudguard("audit", "--inventory", "vms.json", cwd=repo)
    assert done.returncode == 97 and "writable by group or others" in done.stderr, done.stderr

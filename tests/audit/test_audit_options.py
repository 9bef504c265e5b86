"""Options declared once (cloudguard.settings.core_options): --help, config keys and validation
derive from the declarations, so they cannot drift apart; cloudguard.toml is read by one module."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest
from audit_helpers import azure_vm, run_audit_cli, write_json
from named_checks import broken
from typer.main import get_command

from cloudguard import project_file
from cloudguard.cloud.options import AUDIT, REAP_APPLY
from cloudguard.guard.seal_registry import RegistryError, load_registry
from cloudguard.settings.core_options import OPTIONS, command_options, config_keys

# Parameters a command has besides its declared options.
OWN = {
    AUDIT: {"config", "help"},
    REAP_APPLY: {"plan_path", "yes", "approve", "log", "config", "help"},
}


def _command(path: str) -> click.Command:
    from cloudguard import cli

    cli._register_audit()
    cli._register_reap()
    command: Any = get_command(cli.app)
    for name in path.split():
        command = command.commands[name]
    return command  # type: ignore[no-any-return]


@pytest.mark.parametrize("command", [AUDIT, REAP_APPLY])
def test_the_help_lists_exactly_the_declared_options_as_declared(command: str) -> None:
    params = {p.name: p for p in _command(command).get_params(click.Context(click.Command("x")))}
    declared = {o.name: o for o in command_options(command)}
    assert set(params) - OWN[command] == set(declared), "--help and the declarations differ"
    for name, option in declared.items():
        param = params[name]
        shown = option.shown[command]
        assert param.help == shown.help, f"{name}: help drifted"
        assert param.metavar == shown.metavar, f"{name}: metavar drifted"
        flags = option.flags or (f"--{option.key}",)
        assert [*param.opts, *param.secondary_opts] == [
            f for spelled in flags for f in spelled.split("/")
        ], f"{name}: flags drifted"


def test_every_audit_option_but_report_is_a_config_key_and_reap_has_its_own() -> None:
    on_audit_command_line = {o.key for o in command_options(AUDIT)}
    assert set(config_keys("audit")) == on_audit_command_line - {"report"}
    reap_keys = {"accounts", "max-age", "item-budget", "deadline", "lock-directory"}
    assert set(config_keys("reap")) == reap_keys
    # `reap apply` reuses the audit's declarations for what they share.
    shared = {o.key for o in command_options(REAP_APPLY)} & on_audit_command_line
    assert {"credential", "controller-home", "owned-ids", "grace", "leaked-by", "retries"} <= shared


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_json(tmp_path / "vms.json", [azure_vm("vm-1", tags={"task-id": "t-1"})])
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("key", config_keys("audit"))
def test_every_audit_key_is_validated_97_naming_it(fleet: Path, key: str) -> None:
    # A table is the wrong type for every option: each key must be checked, none ignored.
    (fleet / "cloudguard.toml").write_text(f"[audit]\n{key} = {{ wrong = 1 }}\n")
    result = run_audit_cli("--inventory", "vms.json")
    assert result.exit_code == 97, broken(
        "every-key-is-validated", f"a table for {key!r} was accepted: exit {result.exit_code}"
    )
    assert f"audit.{key}:" in result.stderr


def test_a_valid_config_is_accepted_the_control(fleet: Path) -> None:
    # The control for the test above: the same file with a right value is admitted.
    (fleet / "cloudguard.toml").write_text('[audit]\nformat = "json"\n')
    # Unverified resources accepted on the command line: a discovered file may not (trust).
    result = run_audit_cli("--inventory", "vms.json", "--allow-unverified")
    assert result.exit_code == 0, result.stderr


def test_a_bad_value_on_the_command_line_is_usage_not_config(fleet: Path) -> None:
    result = run_audit_cli("--inventory", "vms.json", "--grace", "soon")
    assert result.exit_code == 2
    assert "--grace" in result.stderr


def test_a_section_that_is_not_a_table_is_97_naming_file_line_and_section(fleet: Path) -> None:
    (fleet / "cloudguard.toml").write_text('# settings\naudit = "json"\n')
    result = run_audit_cli("--inventory", "vms.json")
    assert result.exit_code == 97
    assert f"{fleet / 'cloudguard.toml'}: line 2: audit: must be a table" in result.stderr
    with pytest.raises(RegistryError, match="line 2: audit: must be a table"):
        load_registry(fleet / "cloudguard.toml")


def test_the_seal_admits_every_section_cloudguard_reads(tmp_path: Path) -> None:
    # [reap] used to be an unknown key to the seal: `cloudguard run` refused a project's
    # file that `reap apply --yes` requires.
    toml = tmp_path / "cloudguard.toml"
    toml.write_text(
        '[audit]\nformat = "json"\n\n[reap]\naccounts = ["sub-1"]\n\n'
        '[seal.names]\nVAULT_TOKEN = "vault"\n'
    )
    assert set(project_file.SECTIONS) == {
        "seal", "provider", "shims", "hard", "audit", "reap", "history", "notify", "ambient",
        "outputs",
    }  # fmt: skip
    assert load_registry(toml).covers("VAULT_TOKEN")
    toml.write_text("[reaps]\n")
    with pytest.raises(RegistryError, match="unknown key 'reaps'"):
        load_registry(toml)


def test_an_unknown_reap_key_suggests_the_closest(tmp_path: Path) -> None:
    toml = tmp_path / "cloudguard.toml"
    toml.write_text('[reap]\naccount = ["sub-1"]\n')
    from cloudguard.settings import config_errors as cfg
    from cloudguard.settings.resolve import section_values

    with pytest.raises(
        cfg.ConfigError, match=r"reap\.account: unknown key; did you mean 'accounts'"
    ):
        section_values(project_file.read_project_file(toml), "reap")
    # [reap] accounts is a list, as before: a lone string is refused.
    toml.write_text('[reap]\naccounts = "sub-1"\n')
    with pytest.raises(cfg.ConfigError, match=r"reap\.accounts: expected a list"):
        section_values(project_file.read_project_file(toml), "reap")


def test_declarations_have_unique_keys_and_flags() -> None:
    keys = [o.key for o in OPTIONS]
    assert len(keys) == len(set(keys))
    flags = [f for o in OPTIONS for spelled in o.flags for f in spelled.split("/")]
    assert len(flags) == len(set(flags))

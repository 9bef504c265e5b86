"""The seal registry: the shipped contents pinned, project files validated line by line."""

from __future__ import annotations

from pathlib import Path

import pytest
from guard_helpers import cloudguard, minimal_env
from named_checks import broken
from trusted_config import write_trusted

from cloudguard.guard.seal_registry import RegistryError, load_registry

# The shipped registry, literally. Growing or shrinking it is a visible diff here.
PINNED_NAMES = {
    "FM_HOME",
    "FM_WORKER_PROVIDER_COMMAND",
    "FM_SPAWN_CLOUD",
    "IDENTITY_ENDPOINT",
    "IDENTITY_HEADER",
    "IDENTITY_SERVER_THUMBPRINT",
    "IMDS_ENDPOINT",
    "MSI_ENDPOINT",
    "MSI_SECRET",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "SYSTEM_OIDCREQUESTURI",
    "SYSTEM_ACCESSTOKEN",
    "CI_JOB_JWT",
    "CI_JOB_JWT_V2",
    "BITBUCKET_STEP_OIDC_TOKEN",
    "CIRCLE_OIDC_TOKEN",
    "CIRCLE_OIDC_TOKEN_V2",
    "KUBECONFIG",
}
PINNED_PREFIXES = ("FM_AZURE_", "AZURE_", "ARM_", "AWS_", "GOOGLE_", "CLOUDSDK_", "GCE_METADATA_")
PINNED_SHIMS = ("az", "azd", "azcopy", "aws", "gcloud", "gsutil", "bq")
PINNED_MASKED_HOMES = ("~/.aws", "~/.azure", "~/.azd", "~/.config/gcloud", "~/.IdentityService")
PINNED_AMBIENT_ROOTS = ("~/.Azure", "$XDG_STATE_HOME/cloudguard")


def test_shipped_registry_is_exactly_the_pinned_set() -> None:
    registry = load_registry()

    assert set(registry.names) == PINNED_NAMES and len(registry.names) == 19
    assert registry.prefixes == PINNED_PREFIXES and len(registry.prefixes) == 7
    assert registry.shims == PINNED_SHIMS
    assert registry.provider_variables == ("FM_WORKER_PROVIDER_COMMAND",)
    # Trust and display settings, not identity (docs/guard.md).
    assert registry.exempt_prefixes == (
        "AWS_CA_BUNDLE",
        "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE",
        "AZURE_CORE_NO_COLOR",
    )
    assert registry.masked_homes == PINNED_MASKED_HOMES
    assert registry.forward_ports == ()
    assert registry.ambient_roots == PINNED_AMBIENT_ROOTS
    # Every masked credential home is an ambient root too: a soft run can write the real one.
    assert registry.roots == (*PINNED_AMBIENT_ROOTS, *PINNED_MASKED_HOMES)
    assert registry.outputs == () and registry.ignored == ()


@pytest.mark.parametrize(
    "name",
    ["AZURE_CLIENT_SECRET", "AWS_PROFILE", "ARM_USE_OIDC", "IDENTITY_HEADER", "FM_AZURE_SUB"],
)
def test_identity_names_are_covered(name: str) -> None:
    assert load_registry().covers(name)


@pytest.mark.parametrize(
    "name", ["CLOUDGUARD_REACH_LOG", "CLOUDGUARD_AWS_X", "HOME", "PATH", "FM_TEST_X"]
)
def test_runner_and_ordinary_names_are_not_covered(name: str) -> None:
    assert not load_registry().covers(name)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cloudguard.toml"
    path.write_text(text)
    return path


def test_a_project_file_adds_names_prefixes_exemptions_shims_and_provider_variables(
    tmp_path: Path,
) -> None:
    project = write(
        tmp_path,
        """
[seal.names]
VAULT_TOKEN = "the team's secret store"

[seal.prefixes]
FM_ = "everything of the fleet's"

[seal.exempt_prefixes]
FM_TEST_ = "the suite's own knobs"

[provider]
variables = ["FM_OTHER_PROVIDER"]

[shims]
terraform = "drives real clouds with ambient identity"

[audit]
task_tag = "task-id"
""",
    )
    registry = load_registry(project)

    assert registry.covers("VAULT_TOKEN") and registry.covers("FM_ANYTHING")
    assert not registry.covers("FM_TEST_SPEED")
    assert registry.provider_variables == ("FM_WORKER_PROVIDER_COMMAND", "FM_OTHER_PROVIDER")
    assert "terraform" in registry.shims
    assert registry.covers("AZURE_CLIENT_ID"), "a project file never removes a shipped entry"


def test_a_project_file_adds_masked_homes_and_forwarded_ports(tmp_path: Path) -> None:
    project = write(
        tmp_path,
        '[hard]\nforward = [4566, 10000]\n\n[hard.masked_homes]\n"~/.vault-token" = "Vault"\n',
    )
    registry = load_registry(project)
    assert registry.masked_homes[-1] == "~/.vault-token"
    assert registry.masked_homes[:-1] == PINNED_MASKED_HOMES
    assert registry.forward_ports == (4566, 10000)


def test_a_project_file_adds_ambient_roots_and_outputs(tmp_path: Path) -> None:
    project = write(
        tmp_path,
        """
[ambient.roots]
"$XDG_DATA_HOME/myapp" = "the application's data root"
"$MYAPP_DATA_DIR" = "outranks XDG_DATA_HOME for the application"
"/srv/myapp" = "the application's system-wide state"

[outputs]
"tests/fixtures/generated" = "the snapshot tests regenerate these on purpose"
"*.egg-info" = "setuptools writes it on an editable install"
"~/.cache/myapp" = "the suite's download cache"
""",
    )
    registry = load_registry(project)

    assert registry.ambient_roots[-3:] == ("$XDG_DATA_HOME/myapp", "$MYAPP_DATA_DIR", "/srv/myapp")
    assert registry.roots[: len(registry.ambient_roots)] == registry.ambient_roots
    assert registry.outputs == ("tests/fixtures/generated", "*.egg-info", "~/.cache/myapp")
    assert registry.ignored == (), "a file named by the operator declares outputs anywhere"


def test_a_discovered_file_declares_outputs_in_its_checkout_only(tmp_path: Path) -> None:
    """An output outside the checkout lets a run write where the operator lives unnoticed:
    an untrusted repository's file cannot declare it (it is ignored, and said); one in the
    checkout it can, as its .gitignore could. Once the operator trusts the file, both count."""
    (tmp_path / ".git").mkdir()
    text = '[outputs]\n"build" = "the build"\n"~/.aws" = "a planted exemption"\n'
    project = write(tmp_path, text)

    untrusted = load_registry(search_from=tmp_path)
    write_trusted(project, text)
    trusted = load_registry(search_from=tmp_path)

    assert untrusted.outputs == ("build",), broken(
        "untrusted-outputs-outside-the-checkout-are-ignored",
        f"an untrusted file declared outputs {untrusted.outputs}",
    )
    (ignored,) = untrusted.ignored_outputs
    assert "ignored [outputs] ~/.aws: not trusted" in ignored
    assert f"cloudguard trust {project}" in ignored
    assert untrusted.ignored_forward == ()
    assert trusted.outputs == ("build", "~/.aws") and trusted.ignored == ()


def test_the_nearest_cloudguard_toml_is_found_from_a_subdirectory(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # the repository root: discovery stops here
    write(tmp_path, '[seal.names]\nVAULT_TOKEN = "secret store"\n')
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    assert load_registry(search_from=nested).covers("VAULT_TOKEN")


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("[seal]\nprefixs = {}\n", 2, "unknown key 'prefixs' in [seal]"),
        ('\n\n[seel.names]\nX = "y"\n', 3, "unknown key 'seel'"),
        ('[seal.names]\nOK = "fine"\n"BAD-NAME" = "dash"\n', 3, "malformed entry 'BAD-NAME'"),
        ('[seal.names]\nEMPTY = ""\n', 2, "needs a reason"),
        ('[seal.names]\nX = "a"\nX = "b"\n', 3, "Cannot overwrite a value"),
        ('[seal.prefixes]\nVAULT_ = "a"\n\n[seal.names]\nVAULT_TOKEN = "b"\n', 5, "duplicate"),
        ('[seal.prefixes]\nV_ = "a"\nV_X_ = "b"\n', 3, "already sealed by 'V_'"),
        ('[seal.names]\nCLOUDGUARD_LOG = "no"\n', 2, "never sealed"),
        ('[seal.exempt_prefixes]\nAZURE_TEST_ = "no"\n', 2, "would unseal the shipped prefix"),
        ('[seal.exempt_prefixes]\nFM_WORKER_ = "no"\n', 2, "would unseal 'FM_WORKER_PROVIDER"),
        ('[provider]\nvariables = ["OK", "OK"]\n', 2, "duplicate provider variable"),
        ('[shims]\n"bad shim" = "space"\n', 2, "malformed entry 'bad shim'"),
        ('[hard.masked_homes]\n"/etc/x" = "not home"\n', 2, "malformed entry '/etc/x'"),
        ('[hard.masked_homes]\n"~/../x" = "escapes"\n', 2, "malformed entry '~/../x'"),
        ('[hard.masked_homes]\n"~/.vault" = ""\n', 2, "needs a reason"),
        ("[hard]\nforward = [0]\n", 2, "0 is not a port number"),
        ('[hard]\nforward = "5432"\n', 2, "must be a list of port numbers"),
        ("[hard]\nforwards = [1]\n", 2, "unknown key 'forwards' in [hard]"),
        ("[ambient]\nroot = {}\n", 2, "unknown key 'root' in [ambient]"),
        ('[ambient.roots]\n"myapp/data" = "relative"\n', 2, "malformed entry 'myapp/data'"),
        ('[ambient.roots]\n"~/../x" = "escapes"\n', 2, "malformed entry '~/../x'"),
        ('[ambient.roots]\n"$1BAD/x" = "no name"\n', 2, "malformed entry '$1BAD/x'"),
        ('\n[ambient.roots]\n"~/.x/" = "trailing"\n', 3, "malformed entry '~/.x/'"),
        ('[ambient.roots]\n"~/.x" = ""\n', 2, "needs a reason"),
        ('[outputs]\n".git/hooks" = "no"\n', 2, "malformed entry '.git/hooks'"),
        ('[outputs]\n"a/../b" = "escapes"\n', 2, "malformed entry 'a/../b'"),
        ('[outputs]\n"build" = 3\n', 2, "needs a reason"),
    ],
)
def test_bad_registries_are_refused_naming_the_line(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    project = write(tmp_path, text)
    with pytest.raises(RegistryError) as refused:
        load_registry(project)
    assert f"line {line}" in str(refused.value)
    assert message in str(refused.value)


def test_a_typod_registry_refuses_admission_with_exit_97(tmp_path: Path) -> None:
    project = write(tmp_path, '[seal]\nprefixs = {AZ_ = "typo"}\n')

    result = cloudguard("run", "--registry", str(project), "--", "true", env=minimal_env(tmp_path))

    assert result.returncode == 97, result.stderr
    assert f"registry {project} line 2: unknown key 'prefixs'" in result.stderr

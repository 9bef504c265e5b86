"""A project registry cannot undo the seal through `[provider] variables`.

A provider variable is bound to the refusing provider's path. Naming a
variable the seal drops, redirects or sets would rebind it to that path: with
`AWS_EC2_METADATA_DISABLED` or `NO_GCE_CHECK` instance metadata came back on
while `doctor` said the seal held. Such a file is refused naming the line;
the redirections are applied last whatever a registry says; doctor checks
each redirected value.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from guard_helpers import cloudguard, minimal_env
from named_checks import broken

from cloudguard.guard import doctor, policy, seal
from cloudguard.guard.seal_registry import Registry, RegistryError, load_registry


def project(tmp_path: Path, variables: str, extra: str = "") -> Path:
    path = tmp_path / "cloudguard.toml"
    path.write_text(f"{extra}[provider]\nvariables = {variables}\n")
    return path


@pytest.mark.parametrize(
    ("variable", "why"),
    [
        ("AWS_EC2_METADATA_DISABLED", "the seal redirects it"),
        ("NO_GCE_CHECK", "the seal redirects it"),
        ("AZURE_CONFIG_DIR", "the seal redirects it"),
        ("PATH", "PATH is set by the seal"),
        ("PYTHONPATH", "PYTHONPATH is set by the seal"),
        ("CLOUDGUARD_REACH_LOG", "the CLOUDGUARD_ prefix"),
        ("AZURE_CLIENT_SECRET", "a sealed identity variable"),
        ("IDENTITY_ENDPOINT", "a sealed identity variable"),
    ],
)
def test_a_provider_variable_that_would_undo_the_seal_is_refused_naming_the_line(
    tmp_path: Path, variable: str, why: str
) -> None:
    path = project(tmp_path, f'["MY_PROVIDER", "{variable}"]', extra="# a comment\n\n")

    with pytest.raises(RegistryError) as refused:
        load_registry(path)

    assert f"registry {path} line 4: provider variable {variable!r}" in str(refused.value)
    assert why in str(refused.value)


def test_ordinary_shipped_and_own_sealed_provider_variables_are_admitted(tmp_path: Path) -> None:
    # The provider pattern: seal the ambient name under the project's own prefix, bind it.
    text = '["MY_PROVIDER", "FM_WORKER_PROVIDER_COMMAND", "TEAM_PROVIDER"]'
    path = project(tmp_path, text, extra='[seal.prefixes]\nTEAM_ = "the team\'s settings"\n')

    registry = load_registry(path)

    assert registry.provider_variables == (
        "FM_WORKER_PROVIDER_COMMAND",
        "MY_PROVIDER",
        "TEAM_PROVIDER",
    )


def test_the_run_refuses_admission_with_97(tmp_path: Path) -> None:
    path = project(tmp_path, '["AWS_EC2_METADATA_DISABLED", "NO_GCE_CHECK"]')

    result = cloudguard("run", "--registry", str(path), "--", "true", env=minimal_env(tmp_path))

    assert result.returncode == 97, broken(
        "metadata-switches-not-rebindable",
        f"a registry rebinding metadata switches ran: {result.stderr}",
    )
    assert "provider variable 'AWS_EC2_METADATA_DISABLED'" in result.stderr


def test_redirections_are_applied_last_whatever_a_registry_binds(tmp_path: Path) -> None:
    # A registry that slipped past validation (built directly) still cannot rebind them.
    shipped = load_registry()
    rogue = Registry(
        names=shipped.names,
        prefixes=shipped.prefixes,
        exempt_prefixes=(),
        provider_variables=("NO_GCE_CHECK", "AWS_EC2_METADATA_DISABLED", "AWS_CONFIG_FILE"),
        shims=shipped.shims,
    )
    made = seal.create_seal(rogue)
    try:
        env, _ = seal.sealed_environment({"PATH": "/usr/bin"}, rogue, made, "/tmp/log")
        redirected = {name: env[name] for name in policy.REDIRECTED}
    finally:
        made.remove()

    assert redirected == made.redirections(), broken(
        "redirections-applied-last", f"a provider binding replaced: {redirected}"
    )


def test_the_registrys_list_of_redirected_variables_is_the_seals() -> None:
    # The registry's validation reads policy.REDIRECTED (it imports nothing of the seal):
    # the list must be the variables the seal redirects, no fewer and in the same order.
    assert tuple(seal.Seal(Path()).redirections()) == policy.REDIRECTED


def test_doctor_checks_every_redirected_value(tmp_path: Path) -> None:
    registry = load_registry()
    made = seal.create_seal(registry)
    try:
        env, _ = seal.sealed_environment(minimal_env(tmp_path), registry, made, "/tmp/log")
        clean = list(doctor.problems(env, registry))
        del env["NO_GCE_CHECK"]
        env["AZURE_CONFIG_DIR"] = str(made.root)  # a redirection that is not the seal's
        damaged = list(doctor.problems(env, registry))
    finally:
        made.remove()

    assert not [p for p in clean if "redirected" in p], clean  # the control
    missed = [name for name in ("NO_GCE_CHECK", "AZURE_CONFIG_DIR")
              if not any(p.startswith(f"{name} is not redirected") for p in damaged)]  # fmt: skip
    assert missed == [], broken(
        "doctor-checks-redirections", f"doctor missed broken redirections {missed}: {damaged}"
    )

"""Credential homes inside the hard seal: empty, read-only, and the real ones byte-identical."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from hard_helpers import hard_env, hard_run
from named_checks import broken

HOMES = (".aws", ".azure", ".azd", ".config/gcloud", ".IdentityService")
MINTER = """#!/bin/sh
# A credential_process: proof that it ran is the file it leaves.
touch {marker}
echo '{{"Version": 1, "AccessKeyId": "AKIAPLANTEDPLANTED00", "SecretAccessKey": "planted"}}'
"""
PROBE = f"""
# The seal's sentinel keys come first in botocore's chain: a child after the operator's
# profile drops them too.
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
export AWS_CONFIG_FILE="$HOME/.aws/config" AWS_SHARED_CREDENTIALS_FILE="$HOME/.aws/credentials"
{sys.executable} -I -c "import botocore.session as s; print('CREDS', s.Session().get_credentials())"
for home in {" ".join(HOMES)}; do echo "LIST $home:$(ls -A "$HOME/$home" | tr '\n' ' ')"; done
touch "$HOME/.aws/planted-inside" 2>/dev/null && echo WROTE
exit 0
"""


def plant(home: Path, marker: Path) -> None:
    minter = home / "minter.sh"
    minter.write_text(MINTER.format(marker=marker))
    minter.chmod(0o755)
    files = {
        ".aws/config": f"[default]\ncredential_process = {minter}\n",
        ".aws/credentials": "[other]\naws_access_key_id = AKIAPLANTEDPLANTED01\n",
        ".azure/msal_token_cache.json": '{"AccessToken": {}}',
        ".azd/auth/auth.json": "{}",
        ".config/gcloud/application_default_credentials.json": '{"type": "authorized_user"}',
        ".IdentityService/msal.cache": "cache",
    }
    for name, text in files.items():
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def fingerprint(home: Path) -> dict[str, str]:
    return {
        str(path.relative_to(home)): hashlib.sha256(path.read_bytes()).hexdigest()
        if path.is_file()
        else "dir"
        for path in sorted(home.rglob("*"))
    }


def test_planted_credentials_are_invisible_inside_and_untouched_after(tmp_path: Path) -> None:
    env = hard_env(tmp_path)
    home = Path(env["HOME"])
    marker = tmp_path / "credential-process-ran"
    plant(home, marker)

    # The control: under the soft seal a child that re-points AWS_CONFIG_FILE mints credentials.
    soft = hard_run(tmp_path, "sh", "-c", PROBE, options=(), env=env)
    assert marker.exists(), f"the planted credential_process could not run at all:\n{soft.output}"
    assert "WROTE" in soft.stdout, soft.output
    marker.unlink()
    (home / ".aws" / "planted-inside").unlink()
    before = fingerprint(home)

    run = hard_run(tmp_path, "sh", "-c", PROBE, env=env)

    assert "CREDS " in run.stdout, broken("the-probe-ran", f"it did not:\n{run.output}")
    assert not marker.exists(), broken(
        "credential-homes-masked", f"the planted credential_process ran inside:\n{run.output}"
    )
    assert "CREDS None" in run.stdout, run.output
    for name in HOMES:
        assert f"LIST {name}:\n" in run.stdout, f"{name} is not empty inside:\n{run.output}"
    assert "WROTE" not in run.stdout, f"a masked home was writable:\n{run.output}"
    assert fingerprint(home) == before, "the real credential homes changed"
    assert run.returncode == 0, run.output


TOKEN = "s.FAKEvaultTOKEN0001"
READ_THE_TOKEN = 'echo "TOKEN[$(cat "$HOME/.vault-token")]"'


def test_a_projects_own_file_home_is_masked_empty_and_read_only(tmp_path: Path) -> None:
    """A file (not a directory) the project's `[hard.masked_homes]` names: an empty
    read-only file inside, the real one untouched."""
    env = hard_env(tmp_path)
    token = Path(env["HOME"]) / ".vault-token"
    token.write_text(TOKEN)
    project = tmp_path / "project"
    project.mkdir()
    (project / "cloudguard.toml").write_text(
        '[hard.masked_homes]\n"~/.vault-token" = "the team\'s Vault token"\n'
    )
    # The control: under the soft seal the same read finds the token.
    soft = hard_run(tmp_path, "sh", "-c", READ_THE_TOKEN, options=(), env=env, cwd=project)
    assert f"TOKEN[{TOKEN}]" in soft.stdout, soft.output

    script = f'{READ_THE_TOKEN}; (echo x > "$HOME/.vault-token") 2>/dev/null && echo WROTE'
    run = hard_run(tmp_path, "sh", "-c", f"{script}; exit 0", env=env, cwd=project)

    assert "TOKEN[" in run.stdout, broken("the-probe-ran", f"it did not:\n{run.output}")
    assert "TOKEN[]" in run.stdout, broken(
        "a-projects-file-home-is-masked", f"the project's masked file was read:\n{run.output}"
    )
    assert "WROTE" not in run.stdout, f"a masked file was writable:\n{run.output}"
    assert token.read_text() == TOKEN, "the real file changed"
    assert run.returncode == 0, run.output

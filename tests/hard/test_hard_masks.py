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
    # The attempt to write into a masked home is refused and recorded at once (an ambient root).
    assert run.returncode == 98, run.output
    assert run.targets("ambient-write") == [str(home / ".aws" / "planted-inside")], run.output


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


SECRET = "aws_secret_access_key = PLANTEDPLANTEDPLANTED"


def test_a_working_directory_inside_a_masked_home_stops_the_run_naming_it(tmp_path: Path) -> None:
    # A directory entered before the mask was made stays the real one beneath it: `cd ~/.aws
    # && cat credentials` would read the real file. The run stops instead, naming it.
    env = hard_env(tmp_path)
    aws = Path(env["HOME"]) / ".aws"
    aws.mkdir()
    (aws / "credentials").write_text(SECRET)

    run = hard_run(tmp_path, "cat", "credentials", env=env, cwd=aws)

    assert SECRET not in run.stdout, broken(
        "no-read-through-a-masked-cwd", f"the masked home was read through its cwd:\n{run.output}"
    )
    assert run.returncode == 75, f"a cwd inside a masked home did not stop the run:\n{run.output}"
    assert f"the working directory {aws} is inside {aws}" in run.stderr, run.output


def test_masks_cover_the_accounts_home_as_well_as_home(tmp_path: Path) -> None:
    # HOME points elsewhere; the account's home (pwd) holds credentials. The test's namespace
    # (which maps its user to uid 0) shows an /etc/passwd whose uid 0 lives in a directory of
    # the test's: no real home is touched.
    account = tmp_path / "account-home"
    (account / ".aws").mkdir(parents=True)
    (account / ".aws" / "credentials").write_text(SECRET)
    passwd = (
        f'T="$(mktemp -d)"; mkdir "$T/upper" "$T/work"; '
        f'mount -t overlay overlay -o "lowerdir=/etc,upperdir=$T/upper,workdir=$T/work" /etc; '
        f"sed -i 's#^\\([^:]*:[^:]*:0:[^:]*:[^:]*:\\)[^:]*#\\1{account}#' /etc/passwd; "
    )
    script = f"cat {account}/.aws/credentials 2>/dev/null; ls -A {account}/.aws; exit 0"

    run = hard_run(tmp_path, "sh", "-c", script, mounts=True, host_setup=passwd)

    assert SECRET not in run.stdout, broken(
        "the-accounts-home-is-masked", f"the account's home was not masked:\n{run.output}"
    )
    assert run.stdout.strip() == "", run.output
    assert run.returncode == 0, run.output


TAMPER_WITH_SOURCES = """
# Every mount of the seal's sources the mount table shows: write to each (its directory, or
# the file itself), and to the mask; then a fresh read of the masked file.
sources=$(awk '{for (i = 7; i < NF; i++) if ($i == "-" && $(i + 2) == "cloudguard-sources")
    print $5}' /proc/self/mountinfo)
for point in $sources; do
    target="$point"; [ -d "$point" ] && target="$point/empty"
    (chmod u+w "$point" "$target"; echo PLANTED > "$target") 2>/dev/null && echo WROTE-SOURCE
done
token="$HOME/.vault-token"
(chmod u+w "$token"; echo PLANTED > "$token") 2>/dev/null && echo WROTE-MASK
echo "TOKEN:$(cat "$token")"
"""


def test_a_masks_source_cannot_be_reached_or_written_inside(tmp_path: Path) -> None:
    env = hard_env(tmp_path)
    (Path(env["HOME"]) / ".vault-token").write_text("hvs.PLANTEDTOKEN")
    registry = tmp_path / "cloudguard.toml"
    registry.write_text('[hard.masked_homes]\n"~/.vault-token" = "the team\'s Vault token"\n')

    run = hard_run(tmp_path, "sh", "-c", TAMPER_WITH_SOURCES, env=env,
                   options=("--hard", "--registry", str(registry)))  # fmt: skip

    assert "WROTE" not in run.stdout, broken(
        "a-masks-source-is-out-of-reach", f"a mask's source was writable inside:\n{run.output}"
    )
    assert "TOKEN:\n" in run.stdout, f"the masked file did not read empty:\n{run.output}"
    assert (Path(env["HOME"]) / ".vault-token").read_text() == "hvs.PLANTEDTOKEN"
    # A masked home is an ambient root too: the attempt on the mask is recorded (98).
    assert run.targets("ambient-write") == [str(Path(env["HOME"]) / ".vault-token")], run.output
    assert run.returncode == 98, run.output

"""Credential stores: every SDK and CLI store is redirected to an empty place inside the seal.

The operator's HOME is left alone (suites use it), so the only thing between
a sealed command and `~/.azure`, `~/.aws` and `~/.config/gcloud` is each
store's override variable. Each test below fails when one redirection is
removed (tests/guard/test_negative_controls.py breaks each in turn).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from guard_helpers import child, cloudguard, minimal_env
from named_checks import broken

# A store and the variable that moves it; "home" is where the tool falls back without it.
STORES = {
    "AZURE_CONFIG_DIR": ("dir", ".azure"),
    "AWS_CONFIG_FILE": ("file", ".aws/config"),
    "AWS_SHARED_CREDENTIALS_FILE": ("file", ".aws/credentials"),
    "CLOUDSDK_CONFIG": ("dir", ".config/gcloud"),
}
# Fake CLIs of the test's own, first on PATH: each reads its store as the real tool does
# (the override variable, else the default under HOME) and prints what it found.
FAKE_TOOLS = {
    "az": 'cat "${AZURE_CONFIG_DIR:-$HOME/.azure}/azureProfile.json" 2>/dev/null',
    "aws": 'cat "${AWS_SHARED_CREDENTIALS_FILE:-$HOME/.aws/credentials}" '
    '"${AWS_CONFIG_FILE:-$HOME/.aws/config}" 2>/dev/null',
    "gcloud": 'cat "${CLOUDSDK_CONFIG:-$HOME/.config/gcloud}/credentials.db" 2>/dev/null',
}
INSPECT = """
import json, os
seal = os.environ["CLOUDGUARD_SEAL_DIR"]
found = {}
for name in NAMES:
    path = os.environ.get(name, "")
    inside = bool(path) and os.path.realpath(path).startswith(os.path.realpath(seal) + os.sep)
    if os.path.isdir(path):
        empty = os.listdir(path) == []
    else:
        empty = os.path.isfile(path) and os.path.getsize(path) == 0
    found[name] = {"inside_seal": inside, "empty": empty}
print(json.dumps(found))
""".replace("NAMES", repr(list(STORES)))


def operator_home(tmp_path: Path) -> dict[str, str]:
    """A HOME holding the operator's logins in every store, and the env to run with."""
    env = minimal_env(tmp_path)
    home = Path(env["HOME"])
    for store in (".azure/azureProfile.json", ".aws/credentials", ".aws/config",
                  ".config/gcloud/credentials.db"):  # fmt: skip
        path = home / store
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"OPERATOR-LOGIN in ~/{store}\n")
    return env


def test_every_store_points_at_an_empty_place_inside_the_seal(tmp_path: Path) -> None:
    result = cloudguard("run", "--", *child(INSPECT), env=operator_home(tmp_path))

    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    good = {"inside_seal": True, "empty": True}
    wrong = {name: seen for name, seen in found.items() if seen != good}
    assert wrong == {}, broken(
        [f"store-redirected:{name}" for name in wrong],
        f"credential stores not redirected into the seal: {wrong}",
    )


@pytest.mark.parametrize("tool", sorted(FAKE_TOOLS))
def test_a_cli_reading_its_store_finds_nothing_of_the_operators(tmp_path: Path, tool: str) -> None:
    env = operator_home(tmp_path)
    fakebin = tmp_path / "fakebin"
    fakebin.mkdir()
    (fakebin / tool).write_text(f"#!/bin/sh\n{FAKE_TOOLS[tool]}\nexit 0\n")
    (fakebin / tool).chmod(0o755)
    # The test's own fakebin goes first inside the sealed command: an allowance by structure.
    script = f'PATH="{fakebin}:$PATH" {tool}'

    result = cloudguard("run", "--", "sh", "-c", script, env=env)

    assert result.returncode == 0, result.stderr
    assert "OPERATOR-LOGIN" not in result.stdout, broken(
        "the-operators-store-unseen",
        f"an operator credential store reached the sealed {tool}: {result.stdout.strip()}",
    )


def test_control_unsealed_the_fake_clis_do_read_the_operators_stores(tmp_path: Path) -> None:
    import subprocess

    env = operator_home(tmp_path)
    for tool, body in FAKE_TOOLS.items():
        shown = subprocess.run(["sh", "-c", body], env=env, capture_output=True, text=True)
        assert "OPERATOR-LOGIN" in shown.stdout, tool

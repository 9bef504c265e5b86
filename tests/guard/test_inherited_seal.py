"""An inherited "already sealed" state is verified, not assumed (seal.inherited_seal).

The environment variables that say "sealed" are a claim: a stale shell or a
copied environment makes them without a seal. The pytest plugin trusts the
claim only when the seal dir is live and the caller's, its guard bin first on
PATH, no identity variable set and the log an armed log of the caller's;
otherwise the session seals itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from guard_helpers import minimal_env
from named_checks import broken

from cloudguard.documents import reach_log
from cloudguard.guard import alarm, reach, seal
from cloudguard.guard.seal_registry import load_registry

# The operator's real `az`: it would use the secret it finds. Here it leaves a mark.
REAL_AZ = """#!/bin/sh
echo "real az ran with secret=$AZURE_CLIENT_SECRET" > "$(dirname "$0")/../real-az-ran"
"""
INNER = """
import subprocess

def test_runs_az():
    subprocess.run(["az", "account", "show"], stderr=subprocess.DEVNULL)
"""


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[seal.Seal, dict[str, str]]]:
    """A genuinely sealed environment: what `cloudguard run` gives its command."""
    registry = load_registry()
    made = seal.create_seal(registry)
    log = tmp_path / "reach.jsonl"
    alarm.arm(str(log), by="test")
    env, _ = seal.sealed_environment(minimal_env(tmp_path), registry, made, str(log))
    try:
        yield made, env
    finally:
        made.remove()


def problems(env: dict[str, str]) -> list[str]:
    return seal.inherited_seal_problems(env, load_registry())


def test_a_live_seal_of_the_callers_is_trusted(live) -> None:
    made, env = live
    assert problems(env) == []
    assert seal.inherited_seal(env, load_registry()) == made


def test_a_seal_dir_that_no_longer_exists_is_not_trusted(live) -> None:
    made, env = live
    made.remove()
    assert any("does not exist" in p for p in problems(env))


def test_the_guard_bin_must_be_first_on_path(live) -> None:
    _, env = live
    env["PATH"] = "/usr/bin:" + env["PATH"]
    assert any("not first on PATH" in p for p in problems(env))


def test_an_identity_variable_must_not_be_set(live) -> None:
    _, env = live
    env["AZURE_CLIENT_SECRET"] = "s3cret"
    (found,) = problems(env)
    assert "AZURE_CLIENT_SECRET" in found and "s3cret" not in found


def test_the_log_must_be_an_armed_log_of_the_callers(live, tmp_path: Path) -> None:
    _, env = live
    stale = tmp_path / "stale.jsonl"
    stale.write_text("")
    env[reach.LOG_VARIABLE] = str(stale)
    assert any("reach log" in p for p in problems(env))
    link = tmp_path / "link.jsonl"
    link.symlink_to(tmp_path / "reach.jsonl")
    env[reach.LOG_VARIABLE] = str(link)
    assert any("symbolic link" in p for p in problems(env))


def test_a_stale_inherited_seal_is_sealed_again_and_the_real_az_never_runs(
    tmp_path: Path,
) -> None:
    """The issue's reproduction: stale log, removed seal dir, a secret and a real `az`."""
    realbin = tmp_path / "realbin"
    realbin.mkdir()
    (realbin / "az").write_text(REAL_AZ)
    (realbin / "az").chmod(0o755)
    stale_log = tmp_path / "stale.jsonl"
    alarm.arm(str(stale_log), by="a shell long gone")
    env = minimal_env(tmp_path)
    env.update(
        {
            reach.LOG_VARIABLE: str(stale_log),
            seal.SEAL_DIR_VARIABLE: str(tmp_path / "cloudguard-seal-removed"),
            "AZURE_CLIENT_SECRET": "s3cret",
            "PATH": f"{realbin}:{env['PATH']}",
        }
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_inner.py").write_text(INNER)
    junit = tmp_path / "junit.xml"

    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--junitxml={junit}",
         "test_inner.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip

    output = result.stdout + result.stderr
    assert not (tmp_path / "real-az-ran").exists(), broken(
        "a-stale-seal-is-sealed-again", f"the real az ran under a stale seal:\n{output}"
    )
    assert "the inherited seal does not hold" in result.stderr
    (case,) = ET.parse(junit).getroot().iter("testcase")
    (failure,) = [c.get("message") or "" for c in case if c.tag == "failure"]
    assert "this test reached a real cloud: az-shim" in failure
    assert result.returncode == 98, output
    assert reach_log.read(str(stale_log)).reaches == (), "the stale log was written"
    assert os.environ.get("AZURE_CLIENT_SECRET") != "s3cret"

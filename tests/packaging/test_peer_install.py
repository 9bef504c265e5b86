"""An adapter installs beside a suite that pins older SDKs, and changes nothing of that suite's.

Measured on Cloud Custodian's Azure tests (docs/reference.md#installs-that-coexist):
`cloudguard-azure` once pulled in azure-mgmt-resource-subscriptions and -locks,
which write into azure/mgmt/resource/{subscriptions,locks}, files the suite's
azure-mgmt-resource 23 owns, and raised azure-mgmt-resourcegraph from 7 to 8
against the suite's pin: 8 of its tests went red with the guard off.

Here a fresh environment takes a peer's locked set (tests/packaging/peer-pins.txt:
c7n-azure's azure-mgmt-* and everything under them) as it is, offline from uv's
cache and without resolution, then the core and the Azure adapter built from
this checkout, and must show: `pip check` clean (the adapter asks for no other
version than the peer pins), no file owned by two distributions, and the
adapter still working on those older SDKs against the fake ARM
(tests/packaging/peer_probe.py). The controls: the adapter as it was (asking
for azure-mgmt-resourcegraph 8 and the split packages) fails `pip check`, and
the split package beside azure-mgmt-resource 23 shares its files.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from packaging_helpers import adapter_asking_for, run_offline

ROOT = Path(__file__).resolve().parents[2]
UV = ROOT / ".venv-tools" / "bin" / "uv"

PINS = Path(__file__).with_name("peer-pins.txt")
# The split package the adapter once pulled in: dev.py fetches it with the pins.
SPLIT_PACKAGE = next(
    line.strip()
    for line in Path(__file__).with_name("offline-extras.txt").read_text().splitlines()
    if line.startswith("azure-mgmt-resource-subscriptions==")
)

pytestmark = pytest.mark.slow

# Every file of every installed distribution, by the distributions whose RECORD lists it.
_OWNERS = """
import collections, importlib.metadata as m, json
owners = collections.defaultdict(set)
for dist in m.distributions():
    for f in dist.files or ():
        path = str(f)
        if path.endswith(".pyc") or ".dist-info/" in path or path.startswith(".."):
            continue
        owners[path].add(dist.metadata["Name"])
shared = {p: sorted(o) for p, o in owners.items() if len(o) > 1}
print(json.dumps({"shared": shared}))
"""


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    for project in (ROOT, ROOT / "adapters" / "azure"):
        built = run_offline(UV, "build", "--wheel", "--out-dir", out, project)
        assert built.returncode == 0, built.stderr
    return {w.name.split("-")[0]: w for w in out.glob("*.whl")}


def _peer(where: Path, *added: str | Path) -> Path:
    """A venv holding the peer's locked set, then `added` beside it, all without resolution:
    whatever `added` needs that the set does not give, `pip check` names."""
    made = run_offline(UV, "venv", "--quiet", "--python", sys.executable, where)
    assert made.returncode == 0, made.stderr
    python = where / "bin" / "python"
    pinned = run_offline(UV, "pip", "install", "--no-deps", "--python", python, "-r", PINS)
    assert pinned.returncode == 0, (
        f"the peer's locked wheels are not in uv's cache (dev.py test puts them there): "
        f"{pinned.stderr[-500:]}"
    )
    if added:
        installed = run_offline(UV, "pip", "install", "--no-deps", "--python", python, *added)
        assert installed.returncode == 0, installed.stdout + installed.stderr
    return python


def _pip_check(python: Path) -> subprocess.CompletedProcess[str]:
    return run_offline(UV, "pip", "check", "--python", python)


def _facts(python: Path) -> dict[str, dict[str, object]]:
    done = run_offline(python, "-I", "-c", _OWNERS)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_the_adapter_installs_beside_a_peers_pins_and_moves_none(
    tmp_path: Path, wheels: dict[str, Path]
) -> None:
    python = _peer(tmp_path / "peer", wheels["cloudguard_ci"], wheels["cloudguard_azure"])
    check = _pip_check(python)
    assert check.returncode == 0, f"the adapter needs what the peer pins otherwise: {check.stdout}"
    shared = _facts(python)["shared"]
    assert shared == {}, f"files owned by two distributions: {shared}"

    probe = run_offline(python, "-I", ROOT / "tests" / "packaging" / "peer_probe.py")
    assert probe.returncode == 0, probe.stderr[-3000:]
    seen = json.loads(probe.stdout)
    for engine in ("arm", "resource-graph"):
        assert seen["swept"][engine] == {
            "vms": ["vm-0", "vm-1", "vm-locked"],
            "failures": [],
        }, engine
    assert seen["protections"] == [
        "management lock 'keep' (CanNotDelete) on "
        "/subscriptions/0b1f6471-1bf0-4dda-aec3-111111111111/resourceGroups/pilot"
    ]


def test_control_the_adapter_as_it_was_fails_pip_check(
    tmp_path: Path, wheels: dict[str, Path]
) -> None:
    # The same adapter asking for what it used to: pip check names each mismatch.
    adapter = adapter_asking_for(
        tmp_path,
        "azure",
        '"azure-mgmt-resourcegraph>=7",',
        '"azure-mgmt-resourcegraph>=8", "azure-mgmt-resource-locks>=1.0",',
    )
    old = tmp_path / "old"
    built = run_offline(UV, "build", "--wheel", "--out-dir", old, adapter)
    assert built.returncode == 0, built.stderr
    python = _peer(tmp_path / "peer", wheels["cloudguard_ci"], *old.glob("*.whl"))
    check = _pip_check(python)
    assert check.returncode != 0
    assert "azure-mgmt-resourcegraph>=8" in check.stdout + check.stderr
    assert "azure-mgmt-resource-locks" in check.stdout + check.stderr


def test_control_the_split_package_overwrites_the_peers_files(tmp_path: Path) -> None:
    # What the adapter used to pull in: installed beside the pins, it writes into the
    # directories azure-mgmt-resource 23 owns, and the check above names those files.
    python = _peer(tmp_path / "peer", SPLIT_PACKAGE)
    shared = _facts(python)["shared"]
    assert shared, "a split package beside azure-mgmt-resource 23 was expected to share files"
    assert all(
        owners == ["azure-mgmt-resource", "azure-mgmt-resource-subscriptions"]
        for owners in shared.values()
    ), shared
    assert any(path.startswith("azure/mgmt/resource/subscriptions/") for path in shared)

"""The distributions install under their own names from local files only.

"cloudguard" on the package index is an unrelated project, so the core is
published as cloudguard-ci and the adapters depend on that name. These tests
build the three wheels, install them into a fresh virtualenv with no index
(the third-party dependencies are the dev venv's own, linked in), and check
that every dependency resolved to one of ours. The control builds an adapter
that still names "cloudguard" and shows the same install refuses it.
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
TOOLS_PYTHON = ROOT / ".venv-tools" / "bin" / "python"  # has pip; dev.py made it
OURS = ("cloudguard-ci", "cloudguard-azure", "cloudguard-aws", "cloudguard-gcp")

pytestmark = pytest.mark.slow


def _fresh_venv(where: Path) -> Path:
    """A new venv whose third-party packages are the dev venv's (symlinked), none of ours."""
    made = run_offline(UV, "venv", "--quiet", "--python", sys.executable, where)
    assert made.returncode == 0, made.stderr
    python = where / "bin" / "python"
    dev_site = Path(next(p for p in sys.path if p.endswith("site-packages")))
    new_site = next((where / "lib").glob("python3*/site-packages"))
    for entry in dev_site.iterdir():
        name = entry.name.lower()
        if name.startswith(("cloudguard", "_cloudguard", "__editable__", "_editable_")):
            continue
        if name.endswith(".pth") or (new_site / entry.name).exists():
            continue
        (new_site / entry.name).symlink_to(entry)
    return python


def _build(projects: Path, out: Path) -> list[Path]:
    built = run_offline(UV, "build", "--all-packages", "--wheel", "--out-dir", out, cwd=projects)
    assert built.returncode == 0, built.stderr
    return sorted(out.glob("*.whl"))


def _pip_install(python: Path, wheels: Path, requirement: str) -> subprocess.CompletedProcess[str]:
    return run_offline(
        TOOLS_PYTHON, "-m", "pip", "--isolated", "--python", python, "install",
        "--no-index", "--find-links", wheels, requirement,
    )  # fmt: skip


def test_wheels_install_from_local_files_and_resolve_only_to_our_names(tmp_path: Path) -> None:
    wheels = _build(ROOT, tmp_path / "dist")
    assert [w.name.split("-")[0] for w in wheels] == [
        "cloudguard_aws",
        "cloudguard_azure",
        "cloudguard_ci",
        "cloudguard_gcp",
        "cloudguard_toycloud",  # the test suite's third cloud (tests/toycloud): never shipped
    ]
    python = _fresh_venv(tmp_path / "venv")

    installed = _pip_install(python, tmp_path / "dist", "cloudguard-ci[all]")
    assert installed.returncode == 0, installed.stdout + installed.stderr

    probe = run_offline(
        python,
        "-I",  # isolated: neither this checkout (the working directory) nor PYTHONPATH
        "-c",
        "import json, importlib.metadata as m, cloudguard\n"
        "import cloudguard_aws, cloudguard_azure, cloudguard_gcp\n"
        "names = {d.metadata['Name'].lower() for d in m.distributions()}\n"
        "print(json.dumps({'file': cloudguard.__file__, 'names': sorted(names),\n"
        "  'requires': {n: m.requires(n)\n"
        "    for n in ('cloudguard-aws', 'cloudguard-azure', 'cloudguard-gcp')},\n"
        "  'entry_points': sorted(e.name for e in m.entry_points(group='cloudguard.adapters'))}))",
    )
    assert probe.returncode == 0, probe.stderr
    facts = json.loads(probe.stdout)
    assert facts["file"].startswith(str(tmp_path / "venv")), facts["file"]
    assert set(OURS) <= set(facts["names"])
    assert "cloudguard" not in facts["names"]  # the index's unrelated project
    for adapter, requires in facts["requires"].items():
        assert any(r.startswith("cloudguard-ci") for r in requires), (adapter, requires)
        assert not any(r.split("=")[0].split(">")[0] == "cloudguard" for r in requires)
    assert facts["entry_points"] == ["aws", "azure", "gcp"]

    version = run_offline(tmp_path / "venv" / "bin" / "cloudguard", "--version")
    assert (version.returncode, version.stdout.strip()) == (0, "cloudguard-ci 0.1.0")
    shipped = run_offline(
        python,
        "-I",
        "-c",
        "from importlib.resources import files\n"
        "print(sorted(p.name for p in files('cloudguard.schemas').iterdir()"
        " if p.name.endswith('.json')))",
    )
    assert shipped.returncode == 0, shipped.stderr
    assert "audit-report.schema.json" in shipped.stdout


def test_control_an_adapter_naming_the_index_project_does_not_resolve_locally(
    tmp_path: Path,
) -> None:
    # The same install, with the AWS adapter still depending on "cloudguard":
    # with no index it cannot be satisfied, and online it would have fetched the
    # unrelated project. The test above would go red the same way.
    adapter = adapter_asking_for(tmp_path, "aws", '"cloudguard-ci==0.1.0"', '"cloudguard"')
    built = run_offline(UV, "build", "--wheel", "--out-dir", tmp_path / "dist", adapter)
    assert built.returncode == 0, built.stderr
    python = _fresh_venv(tmp_path / "venv")

    installed = _pip_install(python, tmp_path / "dist", "cloudguard-aws")
    assert installed.returncode != 0
    assert "No matching distribution found for cloudguard" in installed.stderr

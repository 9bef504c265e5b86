"""What each published distribution ships: its own package and the licence its metadata names.

The sdist of cloudguard-ci used to carry the whole repository (the adapters,
the tests, the docs, the tools), and no distribution carried the Apache-2.0
text its metadata declares. Built here from this checkout (offline), each
sdist holds its own package, its pyproject and its LICENSE (the core also its
README), and each wheel its LICENSE; every copy is the repository's.
"""

from __future__ import annotations

import email
import os
import subprocess
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parents[2]
UV = ROOT / ".venv-tools" / "bin" / "uv"

# distribution -> its project directory and the top-level entries its sdist may hold.
PUBLISHED = {
    "cloudguard_ci": (ROOT, {"cloudguard", "README.md"}),
    "cloudguard_azure": (ROOT / "adapters" / "azure", {"cloudguard_azure"}),
    "cloudguard_aws": (ROOT / "adapters" / "aws", {"cloudguard_aws"}),
}
# Every sdist: its metadata, its build configuration, the licence (and hatchling's
# .gitignore, which names what a build leaves out).
EVERY_SDIST = {"PKG-INFO", "pyproject.toml", "LICENSE", ".gitignore"}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    env = {k: v for k, v in os.environ.items() if not k.startswith("UV_")} | {"UV_OFFLINE": "1"}
    if "UV_CACHE_DIR" in os.environ:  # the cache dev.py filled
        env["UV_CACHE_DIR"] = os.environ["UV_CACHE_DIR"]
    for project, _ in PUBLISHED.values():
        done = subprocess.run(
            [UV, "build", "--out-dir", out, project],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
    return out


def unexpected_entries(sdist: Path, allowed: set[str]) -> list[str]:
    """The top-level entries of `sdist` (under its `name-version/` directory) not allowed."""
    with tarfile.open(sdist) as archive:
        tops = {PurePosixPath(n).parts[1] for n in archive.getnames() if "/" in n}
    return sorted(tops - allowed - EVERY_SDIST)


@pytest.mark.parametrize("name", PUBLISHED)
def test_each_sdist_holds_only_its_own_package_and_its_licence(built: Path, name: str) -> None:
    (sdist,) = built.glob(f"{name}-*.tar.gz")
    assert unexpected_entries(sdist, PUBLISHED[name][1]) == []
    with tarfile.open(sdist) as archive:
        root = archive.getnames()[0].split("/")[0]
        licence = archive.extractfile(f"{root}/LICENSE")
        assert licence is not None
        assert licence.read() == (ROOT / "LICENSE").read_bytes()


@pytest.mark.parametrize("name", PUBLISHED)
def test_each_wheel_carries_the_licence_its_metadata_names(built: Path, name: str) -> None:
    (wheel,) = built.glob(f"{name}-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        dist_info = next(n.split("/")[0] for n in archive.namelist() if ".dist-info/" in n)
        metadata = email.message_from_bytes(archive.read(f"{dist_info}/METADATA"))
        assert metadata["License-Expression"] == "Apache-2.0"
        assert "LICENSE" in metadata.get_all("License-File", [])
        shipped = archive.read(f"{dist_info}/licenses/LICENSE")
    assert shipped == (ROOT / "LICENSE").read_bytes()
    assert b"Apache License" in shipped and b"Version 2.0, January 2004" in shipped


def test_control_the_check_names_what_does_not_belong(tmp_path: Path) -> None:
    # An sdist holding the checkout's tests and adapters, as the core's used to: named.
    sdist = tmp_path / "cloudguard_ci-0.1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        for member in ("PKG-INFO", "cloudguard/__init__.py", "tests/x.py", "adapters/a.py"):
            source = tmp_path / "empty"
            source.write_text("")
            archive.add(source, arcname=f"cloudguard_ci-0.1.0/{member}")
    assert unexpected_entries(sdist, {"cloudguard", "README.md"}) == ["adapters", "tests"]

"""What the packaging tests share: uv and pip offline, an adapter copied to ask for other
dependencies."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Offline, uv reads the cache dev.py filled, which it finds through XDG_CACHE_HOME; the
# suite's autouse fixture points that at each test's own directory, so it is kept from here.
SESSION_CACHE_HOME = os.environ.get("XDG_CACHE_HOME")


def run_offline(
    *argv: str | Path, cwd: Path = ROOT, timeout: int = 300
) -> subprocess.CompletedProcess[str]:
    """No index, no user or site uv/pip configuration: local files and uv's cache only (the
    cache dev.py filled: a UV_CACHE_DIR it was given is kept)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    if "UV_CACHE_DIR" in os.environ:
        env["UV_CACHE_DIR"] = os.environ["UV_CACHE_DIR"]
    env |= {"PIP_CONFIG_FILE": os.devnull, "UV_OFFLINE": "1", "UV_NO_CONFIG": "1"}
    env.pop("XDG_CACHE_HOME", None)
    if SESSION_CACHE_HOME is not None:
        env["XDG_CACHE_HOME"] = SESSION_CACHE_HOME
    return subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def adapter_asking_for(tmp_path: Path, adapter: str, asked: str, instead: str) -> Path:
    """A copy of adapters/`adapter` (without its tests) whose pyproject asks for `instead`
    where it asks for `asked`, built on its own (out of the uv workspace)."""
    copy = tmp_path / adapter
    shutil.copytree(ROOT / "adapters" / adapter, copy, ignore=shutil.ignore_patterns("tests"))
    pyproject = copy / "pyproject.toml"
    text = pyproject.read_text()
    assert asked in text, f"adapters/{adapter}/pyproject.toml no longer asks for {asked}"
    pyproject.write_text(
        text.replace(asked, instead).replace("cloudguard-ci = { workspace = true }\n", "")
    )
    return copy

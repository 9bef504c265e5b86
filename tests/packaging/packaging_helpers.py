"""What the packaging tests share: an adapter copied to ask for other dependencies."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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

"""docs/proof.md is what the controls say, and lists every module that holds controls."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _page_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "proof_page", Path(__file__).with_name("proof_page.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_module_with_controls_is_on_the_page() -> None:
    listed = {module for modules in _page_module().SECTIONS.values() for module in modules}
    holding = {
        str(path.relative_to(ROOT))
        for folder in ("tests", "adapters")
        for path in (ROOT / folder).rglob("test_*.py")
        if re.search(r"^MUTATIONS\b", path.read_text(), re.MULTILINE)
    }
    assert holding == listed


def test_the_page_is_what_the_controls_say() -> None:
    rendered = _page_module().render()
    assert (ROOT / "docs" / "proof.md").read_text() == rendered, (
        "docs/proof.md is stale: .venv/bin/python tests/docs/proof_page.py > docs/proof.md"
    )

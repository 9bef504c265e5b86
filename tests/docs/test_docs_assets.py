"""The docs' pictures exist and are well-formed, the benchmark charts are drawn from
results, and the docs cite nothing that is not there."""

from __future__ import annotations

import importlib.util
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SVG = "{http://www.w3.org/2000/svg}"


def _charts_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_charts", ROOT / "benchmarks" / "charts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_image_the_docs_show_exists_and_is_an_svg() -> None:
    shown = {
        (page, target)
        for page in DOCS.glob("*.md")
        for target in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", page.read_text())
    }
    assert {t for _, t in shown} >= {"img/guard-layers.svg", "img/audit-evidence-flow.svg"}
    for page, target in shown:
        image = page.parent / target
        assert image.is_file(), f"{page.name} shows {target}, which does not exist"
        assert ET.parse(image).getroot().tag == f"{SVG}svg", target


def test_the_docs_cite_no_missing_file_and_link_no_placeholder() -> None:
    assert "ARCHITECTURE.md" not in (DOCS / "reference.md").read_text()
    assert not (ROOT / "ARCHITECTURE.md").exists()  # the reason the citation had to go
    assert "example.invalid" not in (ROOT / "mkdocs.yml").read_text()


def test_charts_are_drawn_from_the_benchmark_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    charts = _charts_module()
    results, images = tmp_path / "results", tmp_path / "img"
    results.mkdir()
    monkeypatch.setattr(charts, "RESULTS", results)
    monkeypatch.setattr(charts, "DOCS_IMG", images)
    (results / "audit_git.json").write_text(
        json.dumps(
            {"generations": 10_000, "one_process_seconds": 0.1, "per_generation_seconds": 20.0,
             "ratio": 200.0, "python": "3.11.7"}
        )
    )  # fmt: skip
    assert charts.main() == 0
    drawn = sorted(p.name for p in images.iterdir())
    assert drawn == ["bench-audit-git.svg"]  # no result, no chart: nothing made up
    root = ET.parse(images / "bench-audit-git.svg").getroot()
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    assert any("200x faster" in t for t in texts)
    assert "0.100 s" in texts and "20.00 s" in texts
    widths = [float(r.get("width", 0)) for r in root.iter(f"{SVG}rect") if r.get("fill") != "#fff"]
    assert max(widths) / min(widths) > 100  # bars in proportion to the figures

"""Draw the benchmark figures in docs/ as SVG charts, from benchmarks/results/*.json.

`python3 dev.py bench` runs it after the benchmarks (run.py); alone,
`.venv/bin/python benchmarks/charts.py` redraws from the last results. A
benchmark with no result file gets no chart (the old one is left as it was).
Each chart shows one run's side-by-side figures: only ratios within one run
are compared.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cloudguard.audit.formats.html import bar_chart

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DOCS_IMG = HERE.parent / "docs" / "img"

BASELINE, SUBJECT, SLOW = "#868e96", "#1f6feb", "#d9480f"


def _ms(value: float) -> str:
    return f"{value:.1f} ms"


def _s(value: float) -> str:
    return f"{value:.3f} s" if value < 1 else f"{value:.2f} s"


def _count(value: float) -> str:
    return f"{value:,.0f}"


def _per_second(value: float) -> str:
    return f"{value:,.0f}/s"


def guard(r: dict[str, Any]) -> str:
    s = r["startup"]
    return bar_chart(
        f"Refusing a call and recording it: start-up, median (provider {s['provider_ratio']:.2f}x "
        "bare python)",
        [
            ("bare python3 -I -S -c pass", s["bare_ms"], BASELINE),
            ("az shim: refused + recorded", s["shim_ms"], SUBJECT),
            ("provider: refused + recorded", s["provider_ms"], SUBJECT),
            (f"az shim, {s['baseline']} (log + watch)", s["shim_before_ms"], BASELINE),
        ],
        _ms,
        width=760,
    )


def pytest_plugin(r: dict[str, Any]) -> str:
    return bar_chart(
        f"pytest, {r['tests']:,} trivial tests: median wall time "
        f"({r['ratio']:.3f}x with the plugin)",
        [
            ("plugin off", r["off_median"], BASELINE),
            ("plugin on (--cloudguard)", r["on_median"], SUBJECT),
        ],
        _s,
        width=760,
    )


def audit_classify(r: dict[str, Any]) -> str:
    return bar_chart(
        f"Audit throughput on {r['resources']:,} resources (best of {r['repeats']})",
        [(row["what"], row["per_second"], SUBJECT) for row in r["results"]],
        _per_second,
        width=760,
    )


def audit_git(r: dict[str, Any]) -> str:
    return bar_chart(
        f"Checking {r['generations']:,} generations against git ({r['ratio']:,.0f}x faster "
        "with one process)",
        [
            ("one git cat-file --batch-check", r["one_process_seconds"], SUBJECT),
            ("one git process per generation", r["per_generation_seconds"], SLOW),
        ],
        _s,
        width=760,
    )


def azure_sweep(r: dict[str, Any]) -> str:
    requests = bar_chart(
        f"Azure sweep of {r['vms']:,} VMs: HTTP requests ({r['request_ratio']:.0f}x fewer)",
        [
            ("adapter: list_all statusOnly", r["adapter"]["requests"], SUBJECT),
            ("naive: per group + per VM", r["naive"]["requests"], SLOW),
        ],
        _count,
        width=760,
    )
    wall = bar_chart(
        f"Azure sweep of {r['vms']:,} VMs: wall time ({r['wall_ratio']:.1f}x less)",
        [
            ("adapter: list_all statusOnly", r["adapter"]["wall_s"], SUBJECT),
            ("naive: per group + per VM", r["naive"]["wall_s"], SLOW),
        ],
        _s,
        width=760,
    )
    return _stack(requests, wall)


def _stack(*charts: str) -> str:
    """Several charts, one under the other, as one standalone SVG document."""
    y, parts, width = 0, [], 0
    for chart in charts:
        height = int(chart.split('height="', 1)[1].split('"', 1)[0])
        width = max(width, int(chart.split('width="', 1)[1].split('"', 1)[0]))
        parts.append(f'<g transform="translate(0,{y})">{chart}</g>')
        y += height + 10
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" '
        f'viewBox="0 0 {width} {y}">' + "".join(parts) + "</svg>"
    )


CHARTS: dict[str, Callable[[dict[str, Any]], str]] = {
    "guard": guard,
    "pytest_plugin": pytest_plugin,
    "audit_classify": audit_classify,
    "audit_git": audit_git,
    "azure_sweep": azure_sweep,
}


def standalone(svg: str, note: str) -> str:
    """A file of its own: white background, font, and where the figures came from."""
    width = int(svg.split('width="', 1)[1].split('"', 1)[0])
    height = int(svg.split('height="', 1)[1].split('"', 1)[0]) + 24
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">'
        f'<rect width="{width}" height="{height}" fill="#fff"/>{svg}'
        f'<text x="0" y="{height - 6}" font-size="11" fill="#555">{note}</text></svg>\n'
    )


def main() -> int:
    DOCS_IMG.mkdir(parents=True, exist_ok=True)
    for name, draw in CHARTS.items():
        path = RESULTS / f"{name}.json"
        if not path.is_file():
            print(f"charts: no {path.name}; bench-{name}.svg left as it was")
            continue
        result = json.loads(path.read_text(encoding="utf-8"))
        stamp = datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%d")
        python = result.get("python")
        note = f"python3 dev.py bench, {stamp}" + (f", Python {python}" if python else "")
        out = DOCS_IMG / f"bench-{name.replace('_', '-')}.svg"
        out.write_text(standalone(draw(result), note), encoding="utf-8")
        print(f"charts: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

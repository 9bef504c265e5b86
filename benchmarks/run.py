"""Run every benchmark: `python3 dev.py bench` (or `.venv/bin/python benchmarks/run.py [NAME...]`).

Each `benchmarks/bench_*.py` is a standalone script that measures its
subject side by side with its baseline in one run (machines here are noisy;
only ratios from one run are compared), prints a markdown table and writes
`benchmarks/results/<name>.json`. The figures quoted in docs/ come from here;
charts.py then draws them as docs/img/bench-*.svg.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from own_state import own_state_directory

HERE = Path(__file__).resolve().parent


def main(names: list[str]) -> int:
    own_state_directory()  # every benchmark's children keep their state there, never the user's
    scripts = sorted(HERE.glob("bench_*.py"))
    if names:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in names]
    failed = 0
    for script in scripts:
        print(f"\n## {script.stem}\n", flush=True)
        failed |= subprocess.call([sys.executable, str(script)], cwd=HERE.parent)
    # The figures as charts for docs/benchmarks.md (docs/img/bench-*.svg).
    failed |= subprocess.call([sys.executable, str(HERE / "charts.py")], cwd=HERE.parent)
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

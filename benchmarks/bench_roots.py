"""What the run's witness costs: ambient roots and tracked files, looked at before and after.

`cloudguard run -- true`, alternating in one run (medians of wall and CPU
time, the CPU of the whole run: cloudguard and its git processes):

- trivial: an empty HOME, outside any checkout (the baseline of the ratio);
- 10,000 files in the ambient roots: the HOME's cloud CLI homes hold them
  (1 KiB each, all small enough to hash): every one fingerprinted twice;
- 10,000 files elsewhere in HOME: outside every root, never walked;
- a checkout of 10,000 tracked files: `git status` before and after;
- with BENCH_BASELINE=PATH (a checkout of the code before this change, its
  package first on PYTHONPATH): the trivial run without any witness.

Also, in process, the witness's own steps on the 10,000-file home (its
`before` and `after`), so the ratio's cause is visible.

Prints a markdown table and writes benchmarks/results/roots.json.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cloudguard.guard.seal_registry import load_registry
from cloudguard.guard.witness import Witness

FILES = 10_000
ROUNDS = 9
HOMES = (".aws/cli/cache", ".azure", ".config/gcloud/logs", ".azd/auth", ".IdentityService")
RESULTS = Path(__file__).resolve().parent / "results" / "roots.json"


def fill(base: Path, directories: tuple[str, ...]) -> None:
    """FILES files of 1 KiB, spread over `directories` under `base`, 100 per subdirectory."""
    for index in range(FILES):
        directory = base / directories[index % len(directories)] / f"d{index // 100:03d}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"f{index:05d}.json").write_bytes(b"x" * 1024)


def checkout(where: Path) -> None:
    fill(where, ("src", "tests/fixtures", "docs"))
    git = ["git", "-C", str(where), "-c", "user.email=b@example.invalid", "-c", "user.name=b"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "bench"], check=True)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_seconds(env: dict[str, str], cwd: Path) -> tuple[float, float]:
    start, cpu = time.perf_counter(), children_cpu()
    done = subprocess.run(
        [sys.executable, "-m", "cloudguard", "run", "--", "true"],
        env=env, cwd=cwd, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        sys.exit(f"the benchmark's run was not clean ({done.returncode}):\n{done.stderr}")
    return time.perf_counter() - start, children_cpu() - cpu


def environment(home: Path, **extra: str) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}
    return {**env, **extra}


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="cloudguard-bench-roots-") as tmp:
        root = Path(tmp)
        for name in ("empty", "roots", "elsewhere", "plain", "repo"):
            (root / name).mkdir()
        fill(root / "roots", HOMES)
        fill(root / "elsewhere", ("projects/a", "projects/b", "music"))
        checkout(root / "repo")
        variants = {
            "trivial (empty HOME, no checkout)": (environment(root / "empty"), root / "plain"),
            f"{FILES:,} files in the ambient roots": (environment(root / "roots"), root / "plain"),
            f"{FILES:,} files elsewhere in HOME": (environment(root / "elsewhere"), root / "plain"),
            f"a checkout of {FILES:,} tracked files": (environment(root / "empty"), root / "repo"),
        }
        baseline = os.environ.get("BENCH_BASELINE")
        if baseline:
            before = environment(root / "empty", PYTHONPATH=str(Path(baseline).resolve()))
            variants["trivial, before the witness (BENCH_BASELINE)"] = (before, root / "plain")
        for env, cwd in variants.values():
            run_seconds(env, cwd)  # warm the page and bytecode caches
        wall: dict[str, list[float]] = {name: [] for name in variants}
        cpu: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(ROUNDS):
            for name, (env, cwd) in variants.items():
                seconds, used = run_seconds(env, cwd)
                wall[name].append(seconds)
                cpu[name].append(used)
        steps = in_process(root / "roots")

    trivial = next(iter(variants))
    base_wall, base_cpu = statistics.median(wall[trivial]), statistics.median(cpu[trivial])
    print(f"`cloudguard run -- true`, {ROUNDS} alternating rounds each, medians:\n")
    print("| variant | wall s | CPU s | wall ratio | CPU ratio |")
    print("|---|---:|---:|---:|---:|")
    figures = {}
    for name in variants:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        figures[name] = {
            "wall": w,
            "cpu": c,
            "wall_ratio": w / base_wall,
            "cpu_ratio": c / base_cpu,
        }
        print(f"| {name} | {w:.3f} | {c:.3f} | {w / base_wall:.2f}x | {c / base_cpu:.2f}x |")
    print(
        f"\nIn process, the witness on {FILES:,} files in the roots (median of {ROUNDS}): "
        f"before {steps['before_ms']:.0f} ms, after {steps['after_ms']:.0f} ms."
    )
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "files": FILES,
                "rounds": ROUNDS,
                "variants": figures,
                "wall_seconds": wall,
                "cpu_seconds": cpu,
                **steps,
                "python": platform.python_version(),
                "machine": platform.machine(),
            },
            indent=2,
        )
        + "\n"
    )
    return 0


def in_process(home: Path) -> dict[str, float]:
    registry = load_registry()
    environ = {"HOME": str(home)}
    before, after = [], []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        witness = Witness.before(registry, environ, None)
        before.append(time.perf_counter() - start)
        start = time.perf_counter()
        changes = witness.after()
        after.append(time.perf_counter() - start)
        assert changes == [], changes
    return {
        "before_ms": statistics.median(before) * 1e3,
        "after_ms": statistics.median(after) * 1e3,
    }


if __name__ == "__main__":
    sys.exit(main())

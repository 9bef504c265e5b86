"""The hard seal: start-up cost, refusal latency, and a burst of datagrams.

1. Start-up: median wall time of `cloudguard run --hard -- true` and of
   `cloudguard run -- true`, interleaved in one run, as a difference and a
   ratio (goal: at most +50 ms on a quiet machine).
2. Refusal latency: 16 processes x 100 TCP connection attempts to outside
   addresses inside one hard seal; every attempt must be recorded (none
   lost); p50/p99 of connect() until ECONNREFUSED.
3. Burst: 4 processes x 5,000 UDP datagrams sent as fast as they can; every
   one recorded, or the run 97 naming how many the kernel dropped: records
   vs drops, and how long the sink took.
4. Refusal latency side by side with a baseline commit's hard seal
   (`--baseline`, default the last commit whose figure docs/benchmarks.md
   quotes quiet): the load of 2. under this checkout's `cloudguard run --hard`
   and the baseline's, alternated round by round (`--versus-rounds`), each run
   from the same neutral directory with its package on PYTHONPATH; p50, p99
   and the whole run's CPU, per-round ratios, and the load average. On a
   shared machine only these ratios say whether the seal got slower: an
   absolute p99 from a loaded machine says mostly how loaded it was.

Everything runs inside a network namespace this script makes itself
(`unshare -rn`, loopback only): nothing can leave, even if the seal broke.

    .venv/bin/python benchmarks/bench_hard_seal.py [--rounds N] [--baseline REV]
        [--versus-rounds N] [--versus-only]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
REPO = Path(__file__).resolve().parents[1]
# The commit of the quiet figure docs/benchmarks.md quotes (p50 5.79 ms, p99 9.88 ms).
BASELINE = "90ed573"
PROCESSES, ATTEMPTS = 16, 100
BURST_PROCESSES, BURST_DATAGRAMS = 4, 5000
BURST = f"""
import multiprocessing, socket
def flood(worker):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("203.0.113.%d" % (1 + worker), 9))
    sent = 0
    while sent < {BURST_DATAGRAMS}:
        try:
            s.send(b"x")
            sent += 1
        except ConnectionRefusedError:  # a refusal reported on the next send: it sent nothing
            pass
    return sent
with multiprocessing.get_context("fork").Pool({BURST_PROCESSES}) as pool:
    print(sum(pool.map(flood, range({BURST_PROCESSES}))))
"""
LOAD = f"""
import errno, json, multiprocessing, socket, time

def attempts(worker):
    latencies, refused = [], 0
    for n in range({ATTEMPTS}):
        s = socket.socket()
        start = time.perf_counter()
        try:
            s.connect(("203.0.113.%d" % (1 + worker), 1000 + n))
        except ConnectionRefusedError:
            refused += 1
        latencies.append(time.perf_counter() - start)
        s.close()
    return latencies, refused

with multiprocessing.get_context("fork").Pool({PROCESSES}) as pool:
    results = pool.map(attempts, range({PROCESSES}))
latencies = sorted(l for r in results for l in r[0])
print(json.dumps({{"latencies": latencies, "refused": sum(r[1] for r in results)}}))
"""
# The same run without a connect (the pool forked, nothing refused): the CPU of 1,600
# refusals is the load's run's less this one's, apart from the seal's own start-up.
IDLE = LOAD.replace(f"range({ATTEMPTS})", "range(0)")


def wall(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def startup(rounds: int) -> dict[str, float]:
    base = [sys.executable, "-m", "cloudguard", "run"]
    commands = {"soft": [*base, "--", "true"], "hard": [*base, "--hard", "--", "true"]}
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(3):  # warm the page cache
        for argv in commands.values():
            wall(argv)
    for _ in range(rounds):  # interleaved: drift on a noisy machine hits both alike
        for name, argv in commands.items():
            times[name].append(wall(argv))
    medians = {name: statistics.median(values) * 1000 for name, values in times.items()}
    return {
        "rounds": rounds,
        "soft_ms": medians["soft"],
        "hard_ms": medians["hard"],
        "added_ms": medians["hard"] - medians["soft"],
        "ratio": medians["hard"] / medians["soft"],
    }


def run_hard(
    code: str, via: str, *, package: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], list[dict], float]:
    """`code` run by `python -I` under `cloudguard run --hard`: the run, its records of `via`,
    and the seconds it took. `package`: the directory whose `cloudguard` runs the seal, on
    PYTHONPATH, from a neutral working directory (`python -m` puts the working directory
    first on sys.path: from the checkout it would always be the checkout's own)."""
    from cloudguard.documents import reach_log

    log = tempfile.mktemp(suffix=".jsonl")
    env, cwd = None, None
    if package is not None:
        env, cwd = {**os.environ, "PYTHONPATH": str(package)}, tempfile.gettempdir()
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "cloudguard", "run", "--hard", "--log", log, "--",
         sys.executable, "-I", "-c", code],
        capture_output=True, text=True, check=False, env=env, cwd=cwd,
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    try:
        records = [dict(r) for r in reach_log.read(log).reaches if r["via"] == via]
    finally:
        os.unlink(log)
    return result, records, elapsed


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def sink_load(package: Path | None = None) -> dict[str, object]:
    cpu = children_cpu()
    result, records, elapsed = run_hard(LOAD, "hard-tcp", package=package)
    cpu = children_cpu() - cpu  # the whole run's: host, supervisor, the 16 processes
    measured = json.loads(result.stdout)
    latencies = measured["latencies"]
    expected = {(f"203.0.113.{1 + w}", 1000 + n) for w in range(PROCESSES) for n in range(ATTEMPTS)}
    seen = {(r["address"], r["port"]) for r in records}
    return {
        "attempts": len(latencies),
        "recorded": len(records),
        "all_recorded": seen == expected and len(records) == len(expected),
        "refused": measured["refused"],
        "attributed": sum(1 for r in records if r["pid"]),
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99) - 1] * 1000,
        "max_ms": latencies[-1] * 1000,
        "over_10ms": sum(1 for latency in latencies if latency > 0.010),
        "run_exit": result.returncode,
        "seconds": elapsed,
        "cpu_seconds": cpu,
    }


def baseline_package(revision: str, where: Path) -> Path:
    """`revision`'s cloudguard package, extracted into `where` (the checkout's history)."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", revision, "cloudguard"],
        capture_output=True,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    return where


def versus(revision: str, rounds: int) -> dict[str, Any]:
    """The refusal latency under this checkout's seal and `revision`'s, alternated (the
    order swapped every round, so neither always runs right after the other)."""
    runs: dict[str, list[dict[str, Any]]] = {"now": [], "baseline": []}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as old:
        packages = {"now": REPO, "baseline": baseline_package(revision, Path(old))}
        for round_ in range(rounds):
            order = ("now", "baseline") if round_ % 2 == 0 else ("baseline", "now")
            for name in order:
                cpu = children_cpu()
                run_hard(IDLE, "hard-tcp", package=packages[name])
                idle = children_cpu() - cpu
                load = sink_load(packages[name])
                runs[name].append({**load, "refusals_cpu_seconds": load["cpu_seconds"] - idle})
            loads.append(os.getloadavg()[0])

    def median(name: str, key: str) -> float:
        return statistics.median(float(run[key]) for run in runs[name])

    def ratios(key: str) -> list[float]:
        pairs = zip(runs["now"], runs["baseline"], strict=True)
        return sorted(float(a[key]) / float(b[key]) for a, b in pairs)

    summary: dict[str, Any] = {
        "baseline": revision,
        "rounds": rounds,
        "load_start": loads[0],
        "load_end": loads[-1],
        "load_median": statistics.median(loads),
        "all_recorded": all(run["all_recorded"] for name in runs for run in runs[name]),
        "runs": runs,
    }
    for key in ("p50_ms", "p99_ms", "cpu_seconds", "refusals_cpu_seconds"):
        for name in runs:
            summary[f"{name}_{key}"] = median(name, key)
            summary[f"{name}_{key}_range"] = (
                min(float(r[key]) for r in runs[name]),
                max(float(r[key]) for r in runs[name]),
            )
        summary[f"ratio_{key}"] = ratios(key)
    return summary


KEYS = (("p50_ms", "ms"), ("p99_ms", "ms"), ("cpu_seconds", "s"), ("refusals_cpu_seconds", "s"))


def print_versus(v: dict[str, Any]) -> None:
    rows = (("now", "this checkout"), ("baseline", f"{v['baseline']}"))
    print(
        f"| refusal latency, alternated ({v['rounds']} rounds each, load "
        f"{v['load_start']:.1f} -> {v['load_end']:.1f}) | p50 (median; range) "
        "| p99 (median; range) | CPU of the whole run | CPU of the 1,600 refusals |"
    )
    print("|---|---|---|---|---|")
    for name, shown in rows:
        cells = []
        for key, unit in KEYS:
            low, high = v[f"{name}_{key}_range"]
            cells.append(f"{v[f'{name}_{key}']:.2f} {unit} ({low:.2f}–{high:.2f})")
        print(f"| {shown} | " + " | ".join(cells) + " |")
    cells = []
    for key, _ in KEYS:
        r: list[float] = v[f"ratio_{key}"]
        higher = sum(1 for x in r if x > 1)
        cells.append(
            f"{statistics.median(r):.2f}× ({r[0]:.2f}–{r[-1]:.2f}; higher in {higher} of {len(r)})"
        )
    print("| this checkout ÷ baseline, per round | " + " | ".join(cells) + " |")


def burst() -> dict[str, object]:
    import re

    result, records, elapsed = run_hard(BURST, "hard-udp")
    recorded = len(records)
    dropped = re.search(r"dropped (\d+) packet", result.stderr)
    return {
        "sent": int(result.stdout.strip() or 0),
        "recorded": recorded,
        "dropped": int(dropped.group(1)) if dropped else 0,
        "run_exit": result.returncode,
        "seconds": elapsed,
        "records_per_second": recorded / elapsed,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare with")
    parser.add_argument("--versus-rounds", type=int, default=5)
    parser.add_argument("--versus-only", action="store_true", help="only the side by side")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.inside:  # re-run in a loopback-only namespace of our own
        outer = 'ip link set lo up && exec "$@"'
        argv = [sys.executable, __file__, "--inside", *sys.argv[1:]]
        return subprocess.call(["unshare", "-rn", "sh", "-c", outer, "sh", *argv])
    RESULTS.mkdir(exist_ok=True)
    side_by_side = versus(args.baseline, args.versus_rounds) if args.versus_rounds else None
    if side_by_side is not None:
        (RESULTS / "hard_seal_versus.json").write_text(json.dumps(side_by_side, indent=2))
        print_versus(side_by_side)
        print()
        if args.versus_only:
            return 0 if side_by_side["all_recorded"] else 1
    start = startup(args.rounds)
    load = sink_load()
    flood = burst()
    print("| measure | median |")
    print("|---|---|")
    print(f"| `cloudguard run -- true` | {start['soft_ms']:.1f} ms |")
    print(f"| `cloudguard run --hard -- true` | {start['hard_ms']:.1f} ms |")
    print(f"| added by --hard | **{start['added_ms']:+.1f} ms** ({start['ratio']:.2f}×) |")
    print()
    print("| attempts | recorded | refused | p50 | p99 | max | over 10 ms |")
    print("|---|---|---|---|---|---|---|")
    print(
        f"| {PROCESSES} processes x {ATTEMPTS} | {load['recorded']} of {load['attempts']} "
        f"({'all' if load['all_recorded'] else 'NOT all'}, {load['attributed']} with pid) "
        f"| {load['refused']} | {load['p50_ms']:.2f} ms | {load['p99_ms']:.2f} ms "
        f"| {load['max_ms']:.2f} ms | {load['over_10ms']} |"
    )
    print()
    print("| burst | sent | recorded | dropped (97) | exit | seconds | records/s |")
    print("|---|---|---|---|---|---|---|")
    print(
        f"| {BURST_PROCESSES} processes x {BURST_DATAGRAMS} datagrams | {flood['sent']} "
        f"| {flood['recorded']} | {flood['dropped']} | {flood['run_exit']} "
        f"| {flood['seconds']:.1f} | {flood['records_per_second']:.0f} |"
    )
    results = {"startup": start, "sink": load, "burst": flood}
    (RESULTS / "hard_seal.json").write_text(json.dumps(results, indent=2))
    accounted = flood["recorded"] + flood["dropped"] == flood["sent"]  # nothing lost silently
    compared = side_by_side is None or bool(side_by_side["all_recorded"])
    return 0 if load["all_recorded"] and load["run_exit"] == 98 and accounted and compared else 1


if __name__ == "__main__":
    sys.exit(main())

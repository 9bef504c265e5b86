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

Everything runs inside a network namespace this script makes itself
(`unshare -rn`, loopback only): nothing can leave, even if the seal broke.

    .venv/bin/python benchmarks/bench_hard_seal.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
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


def run_hard(code: str, via: str) -> tuple[subprocess.CompletedProcess[str], list[dict], float]:
    """`code` run by `python -I` under `cloudguard run --hard`: the run, its records of `via`,
    and the seconds it took."""
    from cloudguard.documents import reach_log

    log = tempfile.mktemp(suffix=".jsonl")
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "cloudguard", "run", "--hard", "--log", log, "--",
         sys.executable, "-I", "-c", code],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    try:
        records = [dict(r) for r in reach_log.read(log).reaches if r["via"] == via]
    finally:
        os.unlink(log)
    return result, records, elapsed


def sink_load() -> dict[str, object]:
    result, records, elapsed = run_hard(LOAD, "hard-tcp")
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
    }


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
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.inside:  # re-run in a loopback-only namespace of our own
        outer = 'ip link set lo up && exec "$@"'
        argv = [sys.executable, __file__, "--inside", "--rounds", str(args.rounds)]
        return subprocess.call(["unshare", "-rn", "sh", "-c", outer, "sh", *argv])
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
    RESULTS.mkdir(exist_ok=True)
    results = {"startup": start, "sink": load, "burst": flood}
    (RESULTS / "hard_seal.json").write_text(json.dumps(results, indent=2))
    accounted = flood["recorded"] + flood["dropped"] == flood["sent"]  # nothing lost silently
    return 0 if load["all_recorded"] and load["run_exit"] == 98 and accounted else 1


if __name__ == "__main__":
    sys.exit(main())

"""The guard's fast path and the reach log under load.

1. Start-up: median wall time of one refused-and-recorded shim call and one
   provider call, as a ratio to a bare `python3 -I -S -c pass` of the same
   interpreter, measured interleaved in one run (target <= 1.5x): the shims of
   today, which hand their record to the run's record keeper and wait for its
   answer, side by side with the previous mechanism's (each refuser appends to
   the log itself and tells a watch socket), made by that commit's own code
   (`--baseline`, default the commit before the keeper).
2. Reach log: 64 concurrent writer processes appending records to a log armed
   by hand (no keeper: the fallback path); integrity and throughput.

    .venv/bin/python benchmarks/bench_guard.py [--rounds N] [--baseline REV]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cloudguard.documents import reach_log
from cloudguard.guard import alarm, reach
from cloudguard.guard.keeper import Keeper
from cloudguard.guard.seal import create_seal
from cloudguard.guard.seal_registry import load_registry

RESULTS = Path(__file__).resolve().parent / "results"
REPO = Path(__file__).resolve().parents[1]
# The last commit whose refusers appended to the log themselves (the log watch's datagram).
BASELINE = "0fb6e6e"
# Made by the baseline's own code, in a copy of its package: (seal bin dir, log, delivery) on
# stdout. A baseline that has record keepers delivers to this run's (BENCH_KEEPER), so its
# refusers and today's take the same path and differ only by their own code.
BASELINE_SEAL = (
    "import inspect, os, sys, tempfile\n"
    "from cloudguard.guard.seal_registry import load_registry\n"
    "from cloudguard.guard.seal import create_seal\n"
    "from cloudguard.guard import alarm\n"
    "log = tempfile.mktemp(suffix='.jsonl')\n"
    "alarm.arm(log, by='bench baseline')\n"
    "keeps = 'keepers' in inspect.signature(create_seal).parameters\n"
    "extra = {'keepers': [os.environ['BENCH_KEEPER']]} if keeps else {}\n"
    "print(create_seal(load_registry(), log=log, **extra).bin_dir, log,\n"
    "      'keeper' if keeps else 'log')\n"
)


def wall(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def baseline_package(revision: str, where: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", revision, "cloudguard"],
        capture_output=True,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    return where


def startup(rounds: int, baseline: str) -> dict[str, float]:
    log = tempfile.mktemp(suffix=".jsonl")
    start = alarm.arm(log, by="bench")
    keeper = Keeper(log, start)
    seal = create_seal(load_registry(), log=log, keepers=[keeper.address])
    env = {"PATH": "/usr/bin:/bin", reach.LOG_VARIABLE: log}
    with tempfile.TemporaryDirectory() as old:
        made = subprocess.run(
            [sys.executable, "-c", BASELINE_SEAL],
            # Not the checkout: `python -c` puts the working directory first on sys.path, and
            # run from the repository the "baseline" was this checkout's own package.
            cwd=old,
            env={
                **env,
                "PYTHONPATH": str(baseline_package(baseline, Path(old))),
                # The abstract name every keeper-era refuser understands (today's are given
                # the channel's path, whose last part it is).
                "BENCH_KEEPER": "@" + keeper.name,
            },
            capture_output=True,
            text=True,
            check=True,
        )
        old_bin, old_log, old_delivery = made.stdout.split()
        old_env = {**env, reach.LOG_VARIABLE: old_log}
        commands = {
            "bare": ([sys.executable, "-I", "-S", "-c", "pass"], env),
            "shim": ([str(seal.bin_dir / "az"), "vm", "list", "--resource-group", "pilot"], env),
            "provider": ([str(seal.provider), "spawn", "--size", "Standard_D4as_v6"], env),
            "shim_before": ([f"{old_bin}/az", "vm", "list", "--resource-group", "pilot"], old_env),
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        try:
            for _ in range(5):  # warm the page cache
                for argv, environ in commands.values():
                    wall(argv, environ)
            for _ in range(rounds):  # interleaved: drift on a noisy machine hits all alike
                for name, (argv, environ) in commands.items():
                    times[name].append(wall(argv, environ))
            keeper.close()
            recorded = len(reach_log.read(log).reaches)
            recorded_before = len(reach_log.read(old_log).reaches)
            if old_delivery == "keeper":  # the baseline's records are in this run's log too
                recorded_before = recorded - 2 * (rounds + 5)
                recorded -= recorded_before
        finally:
            seal.remove()
            for path in (log, old_log):
                os.unlink(path)
            subprocess.run(["rm", "-rf", str(Path(old_bin).parent)], check=False)
    medians = {name: statistics.median(values) for name, values in times.items()}
    return {
        "rounds": rounds,
        "baseline": baseline,
        "baseline_delivery": old_delivery,
        "bare_ms": medians["bare"] * 1000,
        "shim_ms": medians["shim"] * 1000,
        "provider_ms": medians["provider"] * 1000,
        "shim_before_ms": medians["shim_before"] * 1000,
        "shim_ratio": medians["shim"] / medians["bare"],
        "provider_ratio": medians["provider"] / medians["bare"],
        "shim_before_ratio": medians["shim_before"] / medians["bare"],
        "records_written": recorded,
        "records_written_before": recorded_before,
    }


def _writer(path: str, writer: int, count: int) -> None:
    for n in range(count):
        record = reach.reach_record(
            via="bench", argv=["az", "vm", "list", "x" * 200], target=f"{writer}:{n}"
        )
        reach.append(path, record)


def concurrent_writers(writers: int, each: int) -> dict[str, float]:
    log = tempfile.mktemp(suffix=".jsonl")
    alarm.arm(log, by="bench")
    context = multiprocessing.get_context("fork")
    processes = [context.Process(target=_writer, args=(log, w, each)) for w in range(writers)]
    start = time.perf_counter()
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    elapsed = time.perf_counter() - start
    try:
        targets = [r["target"] for r in reach_log.read(log).reaches]
        intact = sorted(targets) == sorted(f"{w}:{n}" for w in range(writers) for n in range(each))
    finally:
        os.unlink(log)
    return {
        "writers": writers,
        "records": len(targets),
        "expected": writers * each,
        "intact": intact,
        "seconds": elapsed,
        "records_per_second": len(targets) / elapsed,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--per-writer", type=int, default=500)
    parser.add_argument("--baseline", default=BASELINE)
    args = parser.parse_args()
    start = startup(args.rounds, args.baseline)
    load = concurrent_writers(64, args.per_writer)
    print("| measure | median | ratio to bare python |")
    print("|---|---|---|")
    before = "record keeper" if start["baseline_delivery"] == "keeper" else "log + watch datagram"
    rows = [
        ("`python3 -I -S -c pass`", start["bare_ms"], 1.0),
        (
            "refused + recorded `az` shim call (record keeper)",
            start["shim_ms"],
            start["shim_ratio"],
        ),
        (
            "refused + recorded provider call (record keeper)",
            start["provider_ms"],
            start["provider_ratio"],
        ),
        (
            f"refused + recorded `az` shim call ({start['baseline']}: {before})",
            start["shim_before_ms"],
            start["shim_before_ratio"],
        ),
    ]
    for label, milliseconds, ratio in rows:
        print(f"| {label} | {milliseconds:.1f} ms | {ratio:.2f}x |")
    print()
    print("| writers | records written | intact | throughput |")
    print("|---|---|---|---|")
    print(
        f"| {load['writers']} processes | {load['records']} of {load['expected']} "
        f"| {'yes' if load['intact'] else 'NO'} | {load['records_per_second']:,.0f} records/s |"
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "guard.json").write_text(json.dumps({"startup": start, "writers": load}, indent=2))
    expected = 2 * (args.rounds + 5)
    kept_all = start["records_written"] == expected
    return 0 if load["intact"] and kept_all and start["records_written_before"] > 0 else 1


if __name__ == "__main__":
    sys.exit(main())

"""Many subscriptions: the Resource Graph engine vs the ARM engine, in one run.

The issue's case is 1,000 subscriptions x 100 VMs at 20 ms per request. Scaled
for a shared 2-core machine: 1,000 subscriptions (the dimension that decides
the request count of the ARM engine) x 10 VMs each = 10,000 VMs, 20 ms
injected latency per request, ARM's 50 items a page, concurrency bound 8 for
both. `--vms-per-subscription 100` runs the full size (the fake then spends
minutes scanning its own state for the ARM side's 3,000 listings).

- arm: `AzureAdapter.sweep(engine="arm")`: per subscription one paged
  `virtualMachines.list_all(statusOnly=true)` and one paged `disks.list`.
- resource-graph: `AzureAdapter.sweep(engine="resource-graph")`: one batch of
  1,000 subscriptions: which of them Resource Graph sees, the VMs (1,000 rows
  a page) and the unattached disks. The fake keeps Resource Graph's real
  per-user quota (15 queries per 5 s), so waiting for it is part of the time.

The fake runs in its own process (as ARM is remote). Each side runs in a
fresh child process. Both sides must find the same VMs with the same power
states, or the run fails. Prints a markdown table and writes
benchmarks/results/resource_graph.json.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SUBSCRIPTIONS = tuple(f"5eb5c0de-0000-4000-8000-{n:012d}" for n in range(1000))
LATENCY = 0.020
PAGE_SIZE = 50
CONCURRENCY = 8
QUOTA = (15, 5.0)  # Resource Graph's per-user quota: queries per window (seconds)
RESULTS = Path(__file__).resolve().parent / "results" / "resource_graph.json"


def serve_fake(conn: Any, vms_per_subscription: int) -> None:
    from cloudguard_azure.fake_arm import ArmState, Faults, serve

    state = ArmState()
    state.seed_fleet(SUBSCRIPTIONS, 1, vms_per_subscription, tags={"task-id": "task-bench"})
    faults = Faults(latency=LATENCY, page_size=PAGE_SIZE)
    faults.graph.quota(*QUOTA)
    with serve(state, faults) as arm:
        conn.send((arm.base_url, arm.ca_pem, len(state.vms)))
        while True:
            command = conn.recv()
            if command == "counts":
                conn.send(dict(arm.faults.requests))
            elif command == "reset":
                arm.faults.reset_counts()
                conn.send(None)
            else:
                conn.send(None)
                return


def run_side(engine: str, base_url: str, ca_pem: str) -> None:
    """Child process: sweep with `engine`, print wall time and what was found as JSON."""
    import cloudguard_azure.resource_graph  # noqa: F401
    from azure.mgmt.compute import ComputeManagementClient  # noqa: F401
    from azure.mgmt.resourcegraph import ResourceGraphClient  # noqa: F401

    # The VM engines compared; every kind: bench_kinds.py.
    wall, resources = timed_sweep(engine, SUBSCRIPTIONS, ("vm",), base_url, ca_pem)
    found = sorted((r.id.casefold(), r.power_state) for r in resources if r.kind == "vm")
    print(json.dumps({"wall_s": wall, "vms": found}))


def timed_sweep(
    engine: str, subscriptions: tuple[str, ...], kinds: tuple[str, ...], base_url: str, ca_pem: str
) -> tuple[float, Any]:
    """One sweep of the fake ARM with `engine`: its wall time and the resources it found
    (a failed sweep ends the benchmark)."""
    from cloudguard_azure.adapter import AzureAdapter
    from cloudguard_azure.fake_arm import StaticTokenCredential

    from cloudguard.cloud.records import SweepRequest

    request = SweepRequest(
        subscriptions=subscriptions,
        endpoint=base_url,
        ca_bundle=ca_pem,
        concurrency=CONCURRENCY,
        kinds=kinds,
        settings={"engine": engine},
    )
    started = time.perf_counter()
    result = AzureAdapter(StaticTokenCredential()).sweep(request)
    wall = time.perf_counter() - started
    if result.failures:
        raise SystemExit(f"{engine} sweep failed: {result.failures[:3]}")
    return wall, result.resources


def main(vms_per_subscription: int) -> int:
    parent, child = multiprocessing.Pipe()
    server = multiprocessing.Process(
        target=serve_fake, args=(child, vms_per_subscription), daemon=True
    )
    server.start()
    try:
        base_url, ca_pem, made = parent.recv()
        measured: dict[str, dict[str, Any]] = {}
        for engine in ("arm", "resource-graph"):
            parent.send("reset")
            parent.recv()
            done = subprocess.run(
                [sys.executable, __file__, "--side", engine, base_url, ca_pem],
                capture_output=True,
                text=True,
                timeout=1800,
                check=False,
            )
            if done.returncode:
                print(done.stderr, file=sys.stderr)
                return done.returncode
            measured[engine] = json.loads(done.stdout)
            parent.send("counts")
            counts = parent.recv()
            measured[engine]["requests"] = sum(counts.values())
            measured[engine]["requests_by_call"] = counts
        parent.send("stop")
        parent.recv()
    finally:
        server.join(timeout=10)
        if server.is_alive():
            server.terminate()

    arm, graph = measured["arm"], measured["resource-graph"]
    if arm.pop("vms") != graph.pop("vms"):
        print("the two engines disagree on VMs or power states", file=sys.stderr)
        return 1
    request_ratio = arm["requests"] / graph["requests"]
    wall_ratio = arm["wall_s"] / graph["wall_s"]
    print(
        f"{made:,} VMs in {len(SUBSCRIPTIONS):,} subscriptions, {LATENCY * 1000:.0f} ms latency "
        f"per request, ARM {PAGE_SIZE} items a page, Resource Graph 1,000 rows a page and "
        f"{QUOTA[0]} queries per {QUOTA[1]:.0f} s, concurrency bound {CONCURRENCY}; both engines "
        "found the same VMs and power states.\n"
    )
    print("| engine | HTTP requests | wall time (s) |")
    print("|---|---:|---:|")
    for name, figures in (("arm: list_all + disks per subscription", arm),
                          ("resource-graph: batched queries", graph)):  # fmt: skip
        print(f"| {name} | {figures['requests']:,} | {figures['wall_s']:.2f} |")
    print(
        f"| **ratio (arm / resource-graph)** | **{request_ratio:.0f}x** | **{wall_ratio:.1f}x** |"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "resource_graph",
                "python": platform.python_version(),
                "machine": platform.machine(),
                "vms": made,
                "subscriptions": len(SUBSCRIPTIONS),
                "latency_s": LATENCY,
                "arm_page_size": PAGE_SIZE,
                "graph_quota": {"queries": QUOTA[0], "window_s": QUOTA[1]},
                "concurrency": CONCURRENCY,
                "arm": arm,
                "resource_graph": graph,
                "request_ratio": request_ratio,
                "wall_ratio": wall_ratio,
            },
            indent=2,
        )
        + "\n"
    )
    return 0 if request_ratio > 1 and wall_ratio > 1 else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--side", choices=("arm", "resource-graph"))
    parser.add_argument("--vms-per-subscription", type=int, default=10)
    parser.add_argument("rest", nargs="*")
    arguments = parser.parse_args()
    if arguments.side:
        run_side(arguments.side, *arguments.rest)
        sys.exit(0)
    sys.exit(main(arguments.vms_per_subscription))

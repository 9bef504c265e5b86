"""Azure sweep cost: the adapter vs a naive sweep, through the same SDK, in one run.

10,000 VMs across 5 subscriptions x 40 resource groups on the fake ARM
(HTTPS on 127.0.0.1, 20 ms injected latency per request, 50 items a page).

- adapter: `AzureAdapter.sweep` - per subscription one paged
  `virtualMachines.list_all(statusOnly=true)` plus one paged `disks.list`,
  subscriptions in parallel (bound 8, so 5 threads here).
- naive: what most scripts do - list resource groups, list VMs per group,
  then one `virtualMachines.instance_view` per VM for its power state. Given
  a thread pool of the same bound (8), so it finishes in well under a minute
  instead of several; every one of its requests is really made, nothing is
  extrapolated.

The fake runs in its own process (as ARM is remote), so its CPU does not
compete with the client's and the client's peak RSS is the sweep's alone.
Each side runs in a fresh child process; peak memory is that process's
ru_maxrss, minus its RSS after imports. Both sides must find the same
10,000 VMs with the same power states, or the run fails.
Prints a markdown table and writes benchmarks/results/azure_sweep.json.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import platform
import resource
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

SUBSCRIPTIONS = tuple(f"5eb5c0de-0000-4000-8000-00000000000{i}" for i in range(5))
GROUPS = 40
VMS_PER_GROUP = 50
LATENCY = 0.020
PAGE_SIZE = 50
CONCURRENCY = 8
RESULTS = Path(__file__).resolve().parent / "results" / "azure_sweep.json"


# -- the fake ARM, in its own process ---------------------------------------------------


def serve_fake(conn: Any) -> None:
    from cloudguard_azure.fake_arm import ArmState, Faults, serve

    state = ArmState()
    state.seed_fleet(SUBSCRIPTIONS, GROUPS, VMS_PER_GROUP, tags={"task-id": "task-bench"})
    with serve(state, Faults(latency=LATENCY, page_size=PAGE_SIZE)) as arm:
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


# -- the two sweeps, each run in a child process -------------------------------------------


def adapter_sweep(base_url: str, ca_pem: str) -> set[tuple[str, str]]:
    from cloudguard_azure.adapter import AzureAdapter
    from cloudguard_azure.fake_arm import StaticTokenCredential

    from cloudguard.audit.model import SweepRequest

    result = AzureAdapter(StaticTokenCredential()).sweep(
        SweepRequest(
            subscriptions=SUBSCRIPTIONS,
            endpoint=base_url,
            ca_bundle=ca_pem,
            concurrency=CONCURRENCY,
        )
    )
    if result.failures:
        raise SystemExit(f"adapter sweep failed: {result.failures}")
    return {(r.id.casefold(), r.power_state) for r in result.resources if r.kind == "vm"}


def naive_sweep(base_url: str, ca_pem: str) -> set[tuple[str, str]]:
    from azure.mgmt.compute import ComputeManagementClient
    from azure.mgmt.resource.resources import ResourceManagementClient
    from cloudguard_azure.fake_arm import StaticTokenCredential
    from cloudguard_azure.normalise import group_of, power_state

    credential = StaticTokenCredential()
    options: dict[str, Any] = {
        "base_url": base_url,
        "connection_verify": ca_pem,
        "use_env_settings": False,  # as the adapter does for a loopback endpoint
    }
    compute = {s: ComputeManagementClient(credential, s, **options) for s in SUBSCRIPTIONS}
    with ThreadPoolExecutor(CONCURRENCY) as pool:
        groups = [
            (sub, g.name)
            for sub in SUBSCRIPTIONS
            for g in ResourceManagementClient(credential, sub, **options).resource_groups.list()
        ]
        listed = pool.map(lambda sg: list(compute[sg[0]].virtual_machines.list(sg[1])), groups)
        vms = [(str(vm.id).split("/")[2], vm) for page in listed for vm in page]

        def view(item: tuple[str, Any]) -> tuple[str, str]:
            sub, vm = item
            statuses = compute[sub].virtual_machines.instance_view(group_of(str(vm.id)), vm.name)
            return str(vm.id).casefold(), power_state(statuses.statuses)

        return set(pool.map(view, vms))


def run_side(side: str, base_url: str, ca_pem: str) -> None:
    """Child process: import, measure the sweep's wall time and peak RSS, print JSON."""
    import azure.mgmt.compute
    import azure.mgmt.resource.resources  # noqa: F401
    import cloudguard_azure.adapter  # noqa: F401

    baseline_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    sweep = adapter_sweep if side == "adapter" else naive_sweep
    started = time.perf_counter()
    found = sweep(base_url, ca_pem)
    wall = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "wall_s": wall,
                "peak_rss_mib": peak_kib / 1024,
                "sweep_rss_mib": (peak_kib - baseline_kib) / 1024,
                "vms": sorted(found),
            }
        )
    )


# -- the run ---------------------------------------------------------------------------------


def main() -> int:
    parent, child = multiprocessing.Pipe()
    server = multiprocessing.Process(target=serve_fake, args=(child,), daemon=True)
    server.start()
    try:
        base_url, ca_pem, made = parent.recv()
        measured: dict[str, dict[str, Any]] = {}
        for side in ("adapter", "naive"):
            parent.send("reset")
            parent.recv()
            done = subprocess.run(
                [sys.executable, __file__, "--side", side, base_url, ca_pem],
                capture_output=True,
                text=True,
                timeout=900,
                check=False,
            )
            if done.returncode:
                print(done.stderr, file=sys.stderr)
                return done.returncode
            measured[side] = json.loads(done.stdout)
            parent.send("counts")
            counts = parent.recv()
            measured[side]["requests"] = sum(counts.values())
            measured[side]["requests_by_call"] = counts
        parent.send("stop")
        parent.recv()
    finally:
        server.join(timeout=10)
        if server.is_alive():
            server.terminate()

    adapter, naive = measured["adapter"], measured["naive"]
    if adapter.pop("vms") != naive.pop("vms"):
        print("the two sweeps disagree on VMs or power states", file=sys.stderr)
        return 1
    request_ratio = naive["requests"] / adapter["requests"]
    wall_ratio = naive["wall_s"] / adapter["wall_s"]
    print(
        f"{made:,} VMs, {len(SUBSCRIPTIONS)} subscriptions x {GROUPS} resource groups, "
        f"{LATENCY * 1000:.0f} ms latency per request, {PAGE_SIZE} items a page, "
        f"concurrency bound {CONCURRENCY}; both sides found the same VMs and power states.\n"
    )
    print("| sweep | HTTP requests | wall time (s) | peak RSS (MiB) | RSS growth in sweep (MiB) |")
    print("|---|---:|---:|---:|---:|")
    for side, figures in (
        ("adapter: list_all statusOnly", adapter),
        ("naive: per group + per VM", naive),
    ):
        print(
            f"| {side} | {figures['requests']:,} | {figures['wall_s']:.2f} | "
            f"{figures['peak_rss_mib']:.0f} | {figures['sweep_rss_mib']:.0f} |"
        )
    print(f"| **ratio (naive / adapter)** | **{request_ratio:.0f}x** | **{wall_ratio:.1f}x** | | |")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "azure_sweep",
                "python": platform.python_version(),
                "machine": platform.machine(),
                "vms": made,
                "subscriptions": len(SUBSCRIPTIONS),
                "resource_groups_per_subscription": GROUPS,
                "latency_s": LATENCY,
                "page_size": PAGE_SIZE,
                "concurrency": CONCURRENCY,
                "adapter": adapter,
                "naive": naive,
                "request_ratio": request_ratio,
                "wall_ratio": wall_ratio,
                "targets": {"request_ratio": 10, "wall_ratio": 5},
                "targets_met": request_ratio >= 10 and wall_ratio >= 5,
            },
            indent=2,
        )
        + "\n"
    )
    return 0 if request_ratio >= 10 and wall_ratio >= 5 else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--side", choices=("adapter", "naive"))
    parser.add_argument("rest", nargs="*")
    arguments = parser.parse_args()
    if arguments.side:
        run_side(arguments.side, *arguments.rest)
        sys.exit(0)
    sys.exit(main())

"""Azure sweep cost, in one run: the adapter vs a naive sweep, the adapter's JSON reader vs
the SDK's models, and the adapter through a throttling storm, a flaky ARM and a draining quota.

10,000 VMs across 5 subscriptions x 40 resource groups on the fake ARM
(HTTPS on 127.0.0.1, 20 ms injected latency per request, 50 items a page).

- adapter: `AzureAdapter.sweep` - per subscription one paged
  `virtualMachines.list_all(statusOnly=true)` plus one paged `disks.list`,
  subscriptions in parallel (bound 8, so 5 threads here), pages read as JSON.
- sdk-models: the same two listings through `list_all()`/`disks.list()`,
  every item deserialized into azure-mgmt-compute's models and normalised
  from them (the adapter before it read JSON): client CPU per VM, before/after.
- naive: what most scripts do - list resource groups, list VMs per group,
  then one `virtualMachines.instance_view` per VM for its power state. Given
  a thread pool of the same bound (8), so it finishes in well under a minute
  instead of several; every one of its requests is really made, nothing is
  extrapolated.
- storm: the adapter while 30% of requests are answered 429 with
  Retry-After 1-2 s (seeded).
- flaky: the adapter while 10% of requests get a 500 or 503, 5% of pages are
  cut off by a connection reset and 5% are 0.5 s slow (seeded).
- quota: every subscription has a read quota of 15 calls refilled at 3 a
  second (fewer than its 41 pages need at full speed), sent in
  `x-ms-ratelimit-remaining-*` and answered 429 when empty; the adapter paces
  itself by those headers (paced) or does not (unpaced).

The fake runs in its own process (as ARM is remote), so its CPU does not
compete with the client's and the client's figures are the sweep's alone.
Each side runs in a fresh child process; CPU is that process's user+system
time during the sweep; peak memory is its ru_maxrss, minus its RSS after
imports. Every side must find the same 10,000 VMs with the same power
states, or the run fails.
Prints markdown tables and writes benchmarks/results/azure_sweep.json.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import resource
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

# BENCH_QUICK=1: a smoke run at 1/20 the size (2 subscriptions x 5 groups); no results file.
QUICK = os.environ.get("BENCH_QUICK") == "1"
SUBSCRIPTIONS = tuple(f"5eb5c0de-0000-4000-8000-00000000000{i}" for i in range(2 if QUICK else 5))
GROUPS = 5 if QUICK else 40
VMS_PER_GROUP = 50
LATENCY = 0.020
PAGE_SIZE = 50
CONCURRENCY = 8
SEED = 20261130
QUOTA = (15, 3.0)  # calls per subscription, refilled per second: fewer than a sweep's 41
SIDES = ("adapter", "sdk-models", "naive", "storm", "flaky", "quota-paced", "quota-unpaced")
RESULTS = Path(__file__).resolve().parent / "results" / "azure_sweep.json"


# -- the fake ARM, in its own process ---------------------------------------------------


def faults_for(scenario: str) -> Any:
    from cloudguard_azure.fake_arm import Faults

    faults = Faults(latency=LATENCY, page_size=PAGE_SIZE, seed=SEED)
    if scenario == "storm":
        faults.storm(0.3, retry_after=(1, 2))
    elif scenario == "flaky":
        faults.storm(0.1, statuses=(500, 503), retry_after=None)
        faults.cut_pages(share=0.05)
        faults.slow_pages(0.05, 0.5)
    elif scenario.startswith("quota"):
        faults.drain_quota(capacity=QUOTA[0], refill_per_second=QUOTA[1])
    return faults


def serve_fake(conn: Any) -> None:
    from cloudguard_azure.fake_arm import ArmState, serve

    state = ArmState()
    state.seed_fleet(SUBSCRIPTIONS, GROUPS, VMS_PER_GROUP, tags={"task-id": "task-bench"})
    with serve(state, faults_for("baseline")) as arm:
        conn.send((arm.base_url, arm.ca_pem, len(state.vms)))
        while True:
            command = conn.recv()
            if command == "counts":
                conn.send((dict(arm.faults.requests), dict(arm.faults.answered)))
            elif isinstance(command, tuple) and command[0] == "scenario":
                # The server reads `arm.faults` per request: swap in a fresh set.
                arm.faults.__dict__.update(faults_for(command[1]).__dict__)
                conn.send(None)
            else:
                conn.send(None)
                return


# -- the two sweeps, each run in a child process -------------------------------------------


def adapter_sweep(base_url: str, ca_pem: str, paced: bool = True) -> set[tuple[str, str]]:
    from cloudguard_azure.adapter import AzureAdapter, RetrySettings
    from cloudguard_azure.fake_arm import StaticTokenCredential

    from cloudguard.cloud.records import SweepRequest

    settings = RetrySettings() if paced else RetrySettings(quota_low_water=0)
    result = AzureAdapter(StaticTokenCredential(), retry=settings).sweep(
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


def sdk_models_sweep(base_url: str, ca_pem: str) -> set[tuple[str, str]]:
    """The two listings through the SDK's models, normalised from them (as the adapter did)."""
    from azure.mgmt.compute import ComputeManagementClient
    from cloudguard_azure import normalise
    from cloudguard_azure.fake_arm import StaticTokenCredential

    credential = StaticTokenCredential()
    options: dict[str, Any] = {
        "base_url": base_url,
        "connection_verify": ca_pem,
        "use_env_settings": False,
    }

    def one(sub: str) -> list[Any]:
        with ComputeManagementClient(credential, sub, **options) as compute:
            vms = [
                normalise.vm_resource(vm, sub)
                for vm in compute.virtual_machines.list_all(status_only="true")
            ]
            disks = [
                normalise.disk_resource(d, sub)
                for d in compute.disks.list()
                if normalise.is_unattached(d)
            ]
            return vms + disks

    with ThreadPoolExecutor(CONCURRENCY) as pool:
        found = [r for rs in pool.map(one, SUBSCRIPTIONS) for r in rs]
    return {(r.id.casefold(), r.power_state) for r in found if r.kind == "vm"}


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
    sweeps = {
        "naive": naive_sweep,
        "sdk-models": sdk_models_sweep,
        "quota-unpaced": lambda url, ca: adapter_sweep(url, ca, paced=False),
    }
    sweep = sweeps.get(side, adapter_sweep)
    started, cpu_started = time.perf_counter(), time.process_time()
    found = sweep(base_url, ca_pem)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "wall_s": wall,
                "cpu_s": cpu,
                "cpu_ms_per_vm": cpu * 1000 / max(1, len(found)),
                "peak_rss_mib": peak_kib / 1024,
                "sweep_rss_mib": (peak_kib - baseline_kib) / 1024,
                "vms": sorted(found),
            }
        )
    )


# -- the run ---------------------------------------------------------------------------------


def main(sides: tuple[str, ...] = SIDES) -> int:
    """All sides (the figures in docs/, and the results file), or some of them (a check)."""
    parent, child = multiprocessing.Pipe()
    server = multiprocessing.Process(target=serve_fake, args=(child,), daemon=True)
    server.start()
    try:
        base_url, ca_pem, made = parent.recv()
        measured: dict[str, dict[str, Any]] = {}
        for side in sides:
            parent.send(("scenario", side))
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
            counts, answered = parent.recv()
            measured[side]["requests"] = sum(counts.values())
            measured[side]["requests_by_call"] = counts
            measured[side]["answers"] = answered
        parent.send("stop")
        parent.recv()
    finally:
        server.join(timeout=10)
        if server.is_alive():
            server.terminate()

    reference = measured[sides[0]]["vms"]
    disagree = [side for side in sides if measured[side].pop("vms") != reference]
    if disagree:
        print(
            f"sweeps disagree with the adapter on VMs or power states: {disagree}", file=sys.stderr
        )
        return 1
    if sides != SIDES:
        print(json.dumps(measured, indent=2))
        return 0
    adapter, naive, models = measured["adapter"], measured["naive"], measured["sdk-models"]
    request_ratio = naive["requests"] / adapter["requests"]
    wall_ratio = naive["wall_s"] / adapter["wall_s"]
    cpu_ratio = models["cpu_ms_per_vm"] / adapter["cpu_ms_per_vm"]
    print(
        f"{made:,} VMs, {len(SUBSCRIPTIONS)} subscriptions x {GROUPS} resource groups, "
        f"{LATENCY * 1000:.0f} ms latency per request, {PAGE_SIZE} items a page, "
        f"concurrency bound {CONCURRENCY}; every sweep found the same VMs and power states.\n"
    )
    print("| sweep | HTTP requests | wall time (s) | client CPU per VM (ms) | peak RSS (MiB) |")
    print("|---|---:|---:|---:|---:|")
    for side, label in (
        ("adapter", "adapter: list_all statusOnly, pages as JSON"),
        ("sdk-models", "same listings through the SDK's models"),
        ("naive", "naive: per group + per VM"),
    ):
        figures = measured[side]
        print(
            f"| {label} | {figures['requests']:,} | {figures['wall_s']:.2f} | "
            f"{figures['cpu_ms_per_vm']:.3f} | {figures['peak_rss_mib']:.0f} |"
        )
    print(
        f"\nnaive / adapter: **{request_ratio:.0f}x** requests, **{wall_ratio:.1f}x** wall time; "
        f"SDK models / JSON: **{cpu_ratio:.1f}x** client CPU per VM.\n"
    )
    print("| adapter under | HTTP requests | 429 | 500/503 | resets | wall time (s) | findings |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for side, label in (
        ("adapter", "baseline"),
        ("storm", "storm: 30% 429, Retry-After 1-2 s"),
        ("flaky", "flaky: 10% 500/503, 5% resets, 5% slow"),
        ("quota-paced", "draining quota, paced by its headers"),
        ("quota-unpaced", "draining quota, not paced"),
    ):
        figures, answers = measured[side], measured[side]["answers"]
        print(
            f"| {label} | {figures['requests']:,} | {answers.get('429', 0):,} | "
            f"{answers.get('500', 0) + answers.get('503', 0):,} | {answers.get('reset', 0):,} | "
            f"{figures['wall_s']:.2f} | identical |"
        )
    targets = {"request_ratio": 10, "wall_ratio": 5, "cpu_ratio": 2}
    met = request_ratio >= 10 and wall_ratio >= 5 and cpu_ratio >= 2
    if QUICK:
        return 0 if met else 1
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
                "seed": SEED,
                **measured,
                "request_ratio": request_ratio,
                "wall_ratio": wall_ratio,
                "cpu_ratio": cpu_ratio,
                "targets": targets,
                "targets_met": met,
            },
            indent=2,
        )
        + "\n"
    )
    return 0 if met else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--side", choices=SIDES)
    parser.add_argument("--only", nargs="+", choices=SIDES, help="run only these sides")
    parser.add_argument("rest", nargs="*")
    arguments = parser.parse_args()
    if arguments.side:
        run_side(arguments.side, *arguments.rest)
        sys.exit(0)
    sys.exit(main(tuple(arguments.only) if arguments.only else SIDES))

"""Google Cloud sweep cost: 1,000 projects under one folder, swept by `GcpAdapter().sweep`.

The world (seeded, the same every run): 1,000 projects in `folders/200000000001`.
Four in five hold Compute Engine resources, a few each (two instances; every
other one two disks, one of them a boot disk in use; every fourth a regional
address; every third a bucket as well); the fifth holds only other asset types
(a bucket and a Pub/Sub topic). The sweep is the audit's: `--gcp-scope
folders/200000000001`, the real google-cloud-asset and google-cloud-compute
clients over REST, `--concurrency` as the CLI's default (4), `--retries` 10.

What it must cost, asserted (the run fails otherwise):

- Cloud Asset Inventory searches == ceil(rows / 500): one paged search for the
  whole folder, however many projects;
- Compute Engine aggregated lists == the projects holding instances, disks or
  regional addresses, times the kinds each holds (none for a project of
  buckets and topics);
- every row found, once.

Measured: requests, wall time and the client's CPU (user + system of this
process; the fake runs in its own process, as Google is remote, so its CPU is not
the client's), resources per second, peak RSS. The fake answers at once (no
injected latency): the wall time is the client's and the fake's work on a
shared machine, not Google's round trips.

Only 127.0.0.1 is ever contacted: the fake listens there, `--credential fake-gcp`
goes only to a loopback endpoint, and an audit hook in both processes records and
refuses any other connection or name lookup (a record fails the run, even one a
library swallowed).

Prints a markdown table and writes benchmarks/results/gcp_sweep.json.
BENCH_QUICK=1: 50 projects, no results file.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import resource
import socket
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# The fake is a test module of the adapter (not shipped): imported from its tests directory.
sys.path.insert(0, str(HERE.parent / "adapters" / "gcp" / "tests"))

QUICK = os.environ.get("BENCH_QUICK") == "1"
PROJECTS = 50 if QUICK else 1000
CONCURRENCY = 4  # the CLI's default (SweepRequest().concurrency)
RETRIES = 10
PAGE = 500  # searchAllResources' largest page, as the sweep asks for it
ZONE, REGION = "europe-west4-a", "europe-west4"
RESULTS = HERE / "results" / "gcp_sweep.json"

# -- loopback only ----------------------------------------------------------------------------

LOOPBACK = {"127.0.0.1", "::1", "localhost"}
reached: list[str] = []  # what was refused, kept even where a library caught the refusal


def _loopback_only(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect":
        address = args[1]
        host = address[0] if isinstance(address, tuple) else None
        if args[0].family in (socket.AF_INET, socket.AF_INET6) and host not in LOOPBACK:
            reached.append(f"connect {address!r}")
            raise ConnectionRefusedError(f"bench_gcp_sweep: {address!r} is not loopback")
    elif event == "socket.getaddrinfo":
        host = args[0].decode() if isinstance(args[0], bytes) else args[0]
        if host is not None and host not in LOOPBACK:
            reached.append(f"name lookup {host!r}")
            raise socket.gaierror(f"bench_gcp_sweep: {host!r} is not loopback")


# -- the world, in the fake's process ---------------------------------------------------------


def project_id(n: int) -> str:
    return f"fleet-bench-{n:04d}"


def seed(world: Any) -> None:
    from fake_gcp import FOLDER, Address, Disk, Instance, Other

    label = {"task-id": "task-bench"}
    for n in range(PROJECTS):
        p = project_id(n)
        world.project(p, str(418500000000 + n), FOLDER)
        bucket = Other(p, "storage.googleapis.com/Bucket", f"{p}-scratch",
                       "storage.googleapis.com", labels=label)  # fmt: skip
        if n % 5 == 4:  # no Compute Engine at all: a bucket and a topic
            topic = f"projects/{p}/topics/results"
            world.others += [bucket, Other(p, "pubsub.googleapis.com/Topic", topic,
                                           "pubsub.googleapis.com", labels=label)]  # fmt: skip
            continue
        world.instances += [
            Instance(p, ZONE, f"vm-{i}", labels=label, id=f"73122946127452{n:04d}{i}")
            for i in range(2)
        ]
        if n % 2 == 0:
            world.disks += [
                Disk(p, ZONE, "vm-0", users=["vm-0"], labels=label),
                Disk(p, ZONE, "scratch", size_gb=200, type="pd-ssd", labels=label),
            ]
        if n % 4 == 1:
            world.addresses.append(Address(p, REGION, "ip-0", labels=label))
        if n % 3 == 0:
            world.others.append(bucket)


def serve_fake(conn: Any) -> None:
    sys.addaudithook(_loopback_only)
    from fake_gcp import GcpWorld, serve

    world = GcpWorld()
    seed(world)
    rows = sum(len(world.search_rows(p)) for p in world.projects.values())
    held = {
        kind: len({r.project for r in getattr(world, kind)})
        for kind in ("instances", "disks", "addresses")
    }
    with serve(world) as fake:
        conn.send((fake.base_url, fake.ca_pem, rows, held))
        while conn.recv() == "counts":
            conn.send((dict(fake.counts), fake.connections, list(reached)))
        conn.send(None)


# -- the sweep, in this process ---------------------------------------------------------------


def sweep(base_url: str, ca_pem: str) -> dict[str, Any]:
    import google.cloud.asset_v1
    import google.cloud.compute_v1  # noqa: F401
    from cloudguard_gcp.adapter import GcpAdapter
    from fake_gcp import FOLDER

    from cloudguard.cloud.records import SweepRequest

    request = SweepRequest(
        credential="fake-gcp",
        endpoint=base_url,
        ca_bundle=ca_pem,
        concurrency=CONCURRENCY,
        retries=RETRIES,
        settings={"gcp_scope": (FOLDER,)},
    )
    baseline_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started, cpu_started = time.perf_counter(), time.process_time()
    result = GcpAdapter().sweep(request)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if result.failures:
        raise SystemExit(f"the sweep failed: {result.failures}")
    ids = [r.id for r in result.resources]
    kinds: dict[str, int] = {}
    for r in result.resources:
        kinds[r.kind] = kinds.get(r.kind, 0) + 1
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "resources": len(ids),
        "distinct": len(set(ids)),
        "kinds": kinds,
        "resources_per_s": len(ids) / wall,
        "cpu_ms_per_resource": cpu * 1000 / max(1, len(ids)),
        "peak_rss_mib": peak_kib / 1024,
        "sweep_rss_mib": (peak_kib - baseline_kib) / 1024,
    }


def main() -> int:
    sys.addaudithook(_loopback_only)
    parent, child = multiprocessing.Pipe()
    # Forked before this process imports any Google client: the fake's process is its own.
    server = multiprocessing.Process(target=serve_fake, args=(child,), daemon=True)
    server.start()
    try:
        base_url, ca_pem, rows, held = parent.recv()
        measured = sweep(base_url, ca_pem)
        parent.send("counts")
        counts, connections, fake_reached = parent.recv()
        parent.send("stop")
        parent.recv()
    finally:
        server.join(timeout=10)
        if server.is_alive():
            server.terminate()

    searches = counts.get("searchAllResources", 0)
    listings = {k: counts.get(f"{k}.aggregatedList", 0) for k in held}
    expected_searches = math.ceil(rows / PAGE)
    problems: list[str] = []
    if searches != expected_searches:
        problems.append(f"asset searches {searches} != ceil({rows} / {PAGE}) = {expected_searches}")
    if listings != held:
        problems.append(f"Compute listings {listings} != projects holding each kind {held}")
    if not measured["resources"] == measured["distinct"] == rows:
        problems.append(
            f"{measured['resources']} resources ({measured['distinct']} distinct) of {rows} rows"
        )
    unrouted = {op: n for op, n in counts.items() if op.startswith("unrouted")}
    if unrouted or counts.get("token"):
        problems.append(f"requests the sweep should not make: {unrouted or counts}")
    if reached or fake_reached:
        problems.append(f"reached beyond 127.0.0.1: {reached + fake_reached}")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1

    compute_projects = PROJECTS - PROJECTS // 5
    total = sum(counts.values())
    print(
        f"{PROJECTS:,} projects under one folder ({compute_projects:,} holding Compute Engine "
        f"resources, {PROJECTS - compute_projects:,} only buckets and topics), {rows:,} rows; "
        f"fake on 127.0.0.1 in its own process, no injected latency, concurrency "
        f"{CONCURRENCY}.\n"
    )
    print("| requests | count | expected |")
    print("|---|---:|---|")
    expected = f"ceil({rows:,} / {PAGE}) = {expected_searches}"
    print(f"| `searchAllResources` | {searches:,} | {expected} |")
    for kind, n in listings.items():
        print(f"| `{kind}.aggregatedList` | {n:,} | projects holding {kind}: {held[kind]:,} |")
    print(f"| all (TLS connections) | {total:,} ({connections:,}) | |")
    print(
        f"\n| wall time (s) | client CPU (s) | resources/s | CPU per resource (ms) "
        f"| peak RSS (MiB) |\n|---:|---:|---:|---:|---:|\n"
        f"| {measured['wall_s']:.2f} | {measured['cpu_s']:.2f} | "
        f"{measured['resources_per_s']:,.0f} | {measured['cpu_ms_per_resource']:.3f} | "
        f"{measured['peak_rss_mib']:.0f} |"
    )
    if QUICK:
        return 0
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "gcp_sweep",
                "python": platform.python_version(),
                "machine": platform.machine(),
                "load_1m": os.getloadavg()[0],
                "projects": PROJECTS,
                "rows": rows,
                "page_size": PAGE,
                "concurrency": CONCURRENCY,
                "requests": total,
                "requests_by_call": counts,
                "connections": connections,
                "projects_holding": held,
                **measured,
            },
            indent=2,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n", 1)[0]).parse_args()
    sys.exit(main())

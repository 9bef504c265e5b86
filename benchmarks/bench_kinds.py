"""Every kind, at no cost to the VM path: sweeps of every kind vs VMs alone, and the file audit.

1. The ARM engine, 100 subscriptions, each holding 20 VMs and a leaked run's
   resource group (a VM, two disks, a NIC and public IP, a storage account, a
   cluster): `--kind vm` (one VM listing per subscription) against every kind
   (the VM and disk listings, `resources.list` with createdTime, and
   `resourceGroups.list`): HTTP requests and wall time, 20 ms latency, 50 a page.
2. Resource Graph, 1,000 subscriptions of the same: `--kind vm` (which
   subscriptions it sees, then the VMs) against every kind (one union query of
   `resourcecontainers` and `resources`): queries and wall time; every kind must
   cost ceil(rows / 1,000) queries per batch, whatever the tenant holds.
3. `cloudguard audit` of an `az vm list -d` export of 100,000 VMs (`--format
   json`) against `json.load` of the same file: CPU time, best of 3, alternating;
   the goal is at most 3x. The audit is measured as run by default (its history on,
   a store of the bench's own that already holds the previous nights) and with
   `--no-history`, side by side in the same rounds. `--baseline REV` adds both as
   another revision's `cloudguard` package runs them (`git archive REV cloudguard`, first
   on PYTHONPATH; the adapters are this checkout's), with a history store of its own, in
   the same rounds: a change measured beside what it changed. `--history-engine
   postgresql` keeps each side's history in a database of its own on a throwaway
   PostgreSQL server (tests/history/postgres_server.py; a trusted `--config` file's
   `[history] url-env`) and adds the server's CPU for each run (its backends', read
   from the postmaster's reaped children) to the client's.

The fake ARM runs in its own process; each sweep in a fresh child. Prints
markdown tables and writes benchmarks/results/kinds.json.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from own_state import own_state_directory

RESULTS = Path(__file__).resolve().parent / "results" / "kinds.json"
ARM_SUBSCRIPTIONS = tuple(f"5eb5c0de-0000-4000-8000-{n:012d}" for n in range(100))
GRAPH_SUBSCRIPTIONS = tuple(f"6eb5c0de-0000-4000-8000-{n:012d}" for n in range(1000))
LATENCY = 0.020
PAGE_SIZE = 50
CPU_GOAL = 3.0


def seed(state: Any, subscriptions: tuple[str, ...], vms: int) -> int:
    """`vms` fleet VMs and one leaked run's group per subscription; returns the rows
    Resource Graph holds for them (subscriptions, groups, resources)."""
    from cloudguard_azure.fake_arm.compute.models import attach_disk
    from cloudguard_azure.fake_arm.network.models import add_nic

    created = datetime.now(UTC) - timedelta(days=1)
    tags = {"task-id": "cloud-noenv-c7", "ci-run": "77"}
    state.seed_fleet(subscriptions, 1, vms, tags={"task-id": "task-bench"})
    for sub in subscriptions:
        state.add_group(sub, "rg-ci-77").tags.update(tags)
        vm = state.add_vm(sub, "rg-ci-77", "vm-ci-77", tags=tags, time_created=created)
        for name in ("vm-ci-77-os", "vm-ci-77-data"):
            attach_disk(state, vm, state.add_disk(sub, "rg-ci-77", name, tags=tags))
        add_nic(state, vm, tags=tags)
        storage, cluster = (
            "Microsoft.Storage/storageAccounts",
            "Microsoft.ContainerService/managedClusters",
        )
        state.add_resource(sub, "rg-ci-77", storage, "stci77", tags=tags)
        state.add_resource(sub, "rg-ci-77", cluster, "aks-ci-77", tags=tags,
                           sku={"name": "Base", "tier": "Standard"})  # fmt: skip
    groups = sum(len(s.groups) for s in state.subscriptions.values())
    held = len(state.vms) + len(state.disks) + len(state.nics) + len(state.public_ips)
    return len(subscriptions) + groups + held + len(state.generic)


def serve_fake(conn: Any, subscriptions: tuple[str, ...], vms: int) -> None:
    from cloudguard_azure.fake_arm import ArmState, Faults, serve

    state = ArmState()
    rows = seed(state, subscriptions, vms)
    faults = Faults(latency=LATENCY, page_size=PAGE_SIZE)
    faults.graph.quota(15, 5.0)  # Resource Graph's per-user quota
    with serve(state, faults) as arm:
        conn.send((arm.base_url, arm.ca_pem, rows))
        while (command := conn.recv()) != "stop":
            if command == "reset":
                arm.faults.reset_counts()
            conn.send(dict(arm.faults.requests) if command == "counts" else None)
        conn.send(None)


def run_side(engine: str, kinds: str, base_url: str, ca_pem: str, which: str) -> None:
    """Child process: one sweep; prints its wall time and how many resources of each kind."""
    from collections import Counter

    from bench_resource_graph import timed_sweep

    subscriptions = ARM_SUBSCRIPTIONS if which == "arm" else GRAPH_SUBSCRIPTIONS
    wanted = tuple(kinds.split(",")) if kinds else ()
    wall, resources = timed_sweep(engine, subscriptions, wanted, base_url, ca_pem)
    print(json.dumps({"wall_s": wall, "by_kind": Counter(r.kind for r in resources)}))


def sweeps(which: str, vms: int) -> dict[str, Any]:
    subscriptions = ARM_SUBSCRIPTIONS if which == "arm" else GRAPH_SUBSCRIPTIONS
    engine = "arm" if which == "arm" else "resource-graph"
    parent, child = multiprocessing.Pipe()
    server = multiprocessing.Process(
        target=serve_fake, args=(child, subscriptions, vms), daemon=True
    )
    server.start()
    measured: dict[str, Any] = {}
    try:
        base_url, ca_pem, rows = parent.recv()
        measured["rows"] = rows
        for side, kinds in (("vms", "vm"), ("every kind", "")):
            parent.send("reset")
            parent.recv()
            done = subprocess.run(
                [sys.executable, __file__, "--side", engine, kinds, base_url, ca_pem, which],
                capture_output=True, text=True, timeout=1800, check=False,
            )  # fmt: skip
            if done.returncode:
                raise SystemExit(done.stderr)
            measured[side] = json.loads(done.stdout)
            parent.send("counts")
            measured[side]["requests"] = sum(parent.recv().values())
        parent.send("stop")
        parent.recv()
    finally:
        server.join(timeout=10)
    return measured


def baseline_package(revision: str, where: Path) -> Path:
    """`revision`'s cloudguard package, unpacked under `where` (the directory to put first on
    PYTHONPATH)."""
    archive = subprocess.run(
        ["git", "-C", str(Path(__file__).resolve().parents[1]), "archive", revision, "cloudguard"],
        capture_output=True,
        check=True,
    )
    where.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    return where


HISTORY_URL = "CLOUDGUARD_BENCH_HISTORY_URL"  # the variable a side's `[history] url-env` names


class PostgresqlHistory:
    """A throwaway PostgreSQL server holding each side's history in a database of its own."""

    def __init__(self, root: Path) -> None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "history"))
        from postgres_server import PostgresServer

        self.root = root
        self.server = PostgresServer().start()

    def side(self, name: str, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        """The options and environment that keep a side's history in a database of its own."""
        config = self.root / f"{name}.toml"
        config.write_text(f'[history]\nurl-env = "{HISTORY_URL}"\n')  # named: trusted
        return ["--config", str(config)], env | {HISTORY_URL: self.server.create_database(name)}

    def server_cpu(self) -> float:
        """The CPU of the server's exited backends so far (the postmaster reaps each: its
        children's times), once the last client's backend has gone."""
        assert self.server.process is not None
        stat = Path(f"/proc/{self.server.process.pid}/stat")
        before, clock = -1.0, os.sysconf("SC_CLK_TCK")
        for _ in range(100):  # a backend exits just after its client: until two reads agree
            fields = stat.read_text().rsplit(")", 1)[1].split()
            seconds = (int(fields[13]) + int(fields[14])) / clock  # cutime, cstime
            if seconds == before:
                return seconds
            before = seconds
            time.sleep(0.05)
        return seconds

    def stop(self) -> None:
        self.server.stop()


def file_audit(
    vms: int, rounds: int, baseline: str | None = None, engine: str = "sqlite"
) -> dict[str, Any]:
    """CPU of the audit of an export against json.load of it, best of `rounds`, alternating;
    on PostgreSQL, the client's and the server's for that run."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_audit_cli as cli_bench

    with tempfile.TemporaryDirectory(prefix="bench-kinds-") as tmp:
        root = Path(tmp)
        fixtures = cli_bench.make_fixtures_apart(root / "fleet", vms)
        # The history's store: the bench's own, never the user's state directory.
        env = cli_bench._ENV | {"XDG_STATE_HOME": str(root / "state")}
        parse = cli_bench.parse_argv(fixtures["export"])
        audit = cli_bench.audit_argv(fixtures, "json", root / "out.json")
        postgresql = PostgresqlHistory(root) if engine == "postgresql" else None
        try:
            options, new = postgresql.side("main", env) if postgresql else ([], env)
            sides: dict[str, tuple[list[str], dict[str, str]]] = {
                "json.load": (parse, env),
                "audit": ([*audit, *options], new),
                "audit --no-history": ([*audit, *options, "--no-history"], new),
            }
            if baseline is not None:
                # Its own store: a revision of another schema version would refuse this one's.
                old = env | {
                    "XDG_STATE_HOME": str(root / "state-baseline"),
                    "PYTHONPATH": str(baseline_package(baseline, root / "baseline")),
                }
                options, old = postgresql.side("baseline", old) if postgresql else ([], old)
                sides[f"audit ({baseline})"] = ([*audit, *options], old)
                sides[f"audit --no-history ({baseline})"] = (
                    [*audit, *options, "--no-history"], old
                )  # fmt: skip
            for name in ("audit", f"audit ({baseline})"):
                if name in sides:  # warm: caches; each store's first night
                    cli_bench.measure(sides[name][0], root, sides[name][1])
            best = dict.fromkeys(sides, math.inf)
            server_best = dict.fromkeys(sides, 0.0)
            for _ in range(rounds):
                for name, (argv, side_env) in sides.items():
                    server_before = postgresql.server_cpu() if postgresql else 0.0
                    figure = cli_bench.measure(argv, root, side_env)
                    server = postgresql.server_cpu() - server_before if postgresql else 0.0
                    if figure["exit"] not in (0, 1):
                        raise SystemExit(f"{name} failed: {figure['stderr']}")
                    if figure["cpu_s"] + server < best[name] + server_best[name]:
                        best[name], server_best[name] = figure["cpu_s"] + server, server
        finally:
            if postgresql is not None:
                postgresql.stop()
    return {
        "vms": vms,
        "rounds": rounds,
        "baseline": baseline,
        "engine": engine,
        "cpu_s": best,  # the client's, and on PostgreSQL the server's for the same run
        "server_cpu_s": server_best,
        "ratio": best["audit"] / best["json.load"],
        "ratio_no_history": best["audit --no-history"] / best["json.load"],
    }


def main(
    vms: int, rounds: int, graph_vms: int, audit_only: bool, baseline: str | None, engine: str
) -> int:
    own_state_directory()  # whatever a sweep's cloudguard keeps: never in the user's
    load = os.getloadavg()
    audit = file_audit(vms, rounds, baseline, engine)
    audit["load"] = {"before": load, "after": os.getloadavg()}
    _print_audit(audit)
    if audit_only:
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.with_name(
            f"kinds-audit-{engine}.json" if engine != "sqlite" else "kinds-audit.json"
        ).write_text(json.dumps(audit, indent=2))
        return 0
    arm = sweeps("arm", 20)
    graph = sweeps("graph", graph_vms)
    batches = math.ceil(len(GRAPH_SUBSCRIPTIONS) / 1000)
    expected_queries = math.ceil(graph["rows"] / 1000)  # one batch here: rows of the tenant
    print("\n| sweep | kinds | HTTP requests | wall time (s) | resources |")
    print("|---|---|---:|---:|---:|")
    for label, figures in (("ARM engine, 100 subscriptions", arm),
                           ("Resource Graph, 1,000 subscriptions", graph)):  # fmt: skip
        for side in ("vms", "every kind"):
            f = figures[side]
            found = sum(f["by_kind"].values())
            print(f"| {label} | {side} | {f['requests']:,} | {f['wall_s']:.2f} | {found:,} |")
    print(
        f"\nResource Graph, every kind: {graph['every kind']['requests']} queries for "
        f"{graph['rows']:,} rows in {batches} batch(es); ceil(rows / 1,000) = {expected_queries}"
    )
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "arm": arm,
                "graph": graph,
                "audit": audit,
                "expected_graph_queries": expected_queries,
                "python": platform.python_version(),
                "at": datetime.now(UTC).isoformat(),
            },
            indent=2,
        )
    )
    return 0 if graph["every kind"]["requests"] == expected_queries else 1


def _print_audit(audit: dict[str, Any]) -> None:
    cpu = audit["cpu_s"]
    print(
        f"\n| `cloudguard audit` of {audit['vms']:,} VMs (json) "
        f"| CPU best of {audit['rounds']} (s) | vs `json.load` |\n|---|---:|---:|"
        f"\n| json.load | {cpu['json.load']:.2f} | 1 |"
        f"\n| audit, history on (the default; the next night) | {cpu['audit']:.2f} "
        f"| **{audit['ratio']:.2f}×** (goal ≤ {CPU_GOAL}×) |"
        f"\n| audit --no-history | {cpu['audit --no-history']:.2f} "
        f"| **{audit['ratio_no_history']:.2f}×** |"
    )
    if audit["baseline"] is not None:
        for side in ("audit", "audit --no-history"):
            name = f"{side} ({audit['baseline']})"
            print(f"| {name} | {cpu[name]:.2f} | {cpu[name] / cpu['json.load']:.2f}× |")
    if audit["engine"] == "postgresql":
        server = audit["server_cpu_s"]
        print(
            "\nHistory on PostgreSQL: each audit's CPU is the client's and the server's for the "
            "same run; of it the server's: "
            + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in server.items() if seconds)
        )
    before, after = audit["load"]["before"], audit["load"]["after"]
    print(f"\nLoad average (1 min) {before[0]:.2f} before, {after[0]:.2f} after.")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--side":
        run_side(*sys.argv[2:7])
        sys.exit(0)
    parser = argparse.ArgumentParser()
    parser.add_argument("--vms", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--graph-vms", type=int, default=10, help="VMs per subscription")
    parser.add_argument("--audit-only", action="store_true", help="only the file audit")
    parser.add_argument("--baseline", help="also the audit as this git revision runs it")
    parser.add_argument(
        "--history-engine", choices=("sqlite", "postgresql"), default="sqlite",
        help="where the audit's history is kept (postgresql: a throwaway server's)",
    )  # fmt: skip
    arguments = parser.parse_args()
    sys.exit(
        main(arguments.vms, arguments.rounds, arguments.graph_vms, arguments.audit_only,
             arguments.baseline, arguments.history_engine)
    )  # fmt: skip

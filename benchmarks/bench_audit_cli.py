"""The real `cloudguard audit` CLI at fleet scale, side by side with merely parsing its input.

An `az vm list --show-details -o json` export of N VMs (default 100,000;
`--vms 10000` to iterate) with the evidence a real audit reads: a controller
home (state/<task>.meta for 90% of the tasks), a git repository (most
generations are its commits, some are not) and a test corpus naming a
fixture id. Each measured command is a fresh process; its wall time and peak
RSS (`wait4`'s ru_maxrss) are taken by this script:

- baseline: `python -c "json.load(open(FILE))"`, nothing else;
- `cloudguard audit --inventory FILE ... --format F --output OUT` for every format
  (the table written to a file is the plain, one-line-per-finding table);
- live: `cloudguard audit --provider azure` sweeping the same number of VMs from
  the fake ARM (HTTPS on loopback, its own process; no latency injected).

Every audit here runs with `--no-history`: this benchmark measures the formats
and the sweep; what the history adds to the same audit (on by default) is
measured by bench_kinds (the file audit as run by default, side by side with
`--no-history`) and bench_history (the store itself).

Rounds alternate between the commands so a noisy machine's drift hits all
alike; medians are reported. Goals: json, markdown and junit within 3x the
parse's time, the table within 4x; peak RSS of every run (the live sweep
included) within 2x of the parse's. Prints a markdown table and writes
benchmarks/results/audit_cli.json.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from own_state import own_state_directory

RESULTS = Path(__file__).resolve().parent / "results" / "audit_cli.json"
CLOUDGUARD = Path(sys.executable).parent / "cloudguard"
SUBSCRIPTIONS = tuple(f"5eb5c0de-0000-4000-8000-0000000000{i:02d}" for i in range(10))
SIZES = ("Standard_D4as_v6", "Standard_D2s_v5", "Standard_B2s", "Standard_D8s_v5")
POWER = ("VM running", "VM deallocated", "VM stopped")
FIXTURE_ID = "cloud-noenv-c7"
TIME_GOAL = {"json": 3.0, "markdown": 3.0, "junit": 3.0, "table": 4.0}
RSS_GOAL = 2.0
LOAD_BEFORE = [0.0, 0.0, 0.0]
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


# -- fixtures ---------------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | _GIT_ENV
    env["HOME"] = str(repo.parent)
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.strip()


def make_repo(root: Path) -> list[str]:
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    (root / "tests").mkdir()
    (root / "tests" / "test_lifecycle.py").write_text(f'TASK = "{FIXTURE_ID}"\n')
    shas = []
    for index in range(5):
        (root / "CHANGES").write_text(f"change {index}\n")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", f"commit {index}")
        shas.append(_git(root, "rev-parse", "HEAD"))
    return shas


def fleet_task(index: int) -> str:
    return f"task-{index // 10:06d}"  # ten workers a task


def vm_entry(index: int, shas: list[str], now: datetime) -> dict[str, Any]:
    """One VM as `az vm list -d` prints it (the fields az really prints, abridged)."""
    sub = SUBSCRIPTIONS[index % len(SUBSCRIPTIONS)]
    group = f"rg-{index % 50:02d}"
    name = f"vm-{index:06d}-wkr"
    arm_id = (
        f"/subscriptions/{sub}/resourceGroups/{group.upper()}/providers/"
        f"Microsoft.Compute/virtualMachines/{name}"
    )
    tags: dict[str, str] | None = None
    if index % 10 != 9:  # 10% are not the fleet's
        task = FIXTURE_ID if index % 1000 == 7 else fleet_task(index)
        generation = shas[index % len(shas)] if index % 97 else f"{index:040x}"
        tags = {"task-id": task, "repository-generation": generation, "owner": "fleet"}
    created = now - timedelta(minutes=index % 5000)
    return {
        "id": arm_id,
        "name": name,
        "location": "eastus",
        "resourceGroup": group,
        "hardwareProfile": {"vmSize": SIZES[index % len(SIZES)]},
        "powerState": POWER[index % len(POWER)],
        "provisioningState": "Succeeded",
        "timeCreated": created.strftime("%Y-%m-%dT%H:%M:%S.%f") + "1+00:00",
        "tags": tags,
        "vmId": f"{index:08x}-2222-3333-4444-555555555555",
        "privateIps": f"10.{index // 65536 % 256}.{index // 256 % 256}.{index % 256}",
        "publicIps": "",
        "fqdns": "",
        "macAddresses": "00-0D-3A-00-00-00",
        "osProfile": {"adminUsername": "azureuser", "computerName": name},
        "storageProfile": {"osDisk": {"name": f"{name}_OsDisk", "osType": "Linux"}},
    }


def make_fixtures(root: Path, vms: int) -> dict[str, str]:
    now = datetime.now(UTC)
    root.mkdir(parents=True)
    repo = root / "repo"
    shas = make_repo(repo)
    home = root / "home"
    for sub in ("state", "queue", "workers"):
        (home / sub).mkdir(parents=True)
    for task_index in range((vms + 9) // 10):
        if task_index % 10:  # 10% of the tasks have no record: their VMs are orphans
            (home / "state" / f"task-{task_index:06d}.meta").write_text("phase=running\n")
    export = root / "az.json"
    with export.open("w", encoding="utf-8") as out:
        # As az writes it: indented, one document.
        json.dump([vm_entry(i, shas, now) for i in range(vms)], out, indent=2)
    return {"export": str(export), "home": str(home), "repo": str(repo)}


def make_fixtures_apart(root: Path, vms: int) -> dict[str, str]:
    """`make_fixtures` in a child process. A child forked from this one starts with a
    copy of this process's memory, and Linux counts that copy's high-water mark in
    the child's peak RSS even after exec: building 100,000 VMs here would set a
    floor under every measurement."""
    done = subprocess.run(
        [sys.executable, __file__, "--make-fixtures", str(root), "--vms", str(vms)],
        capture_output=True,
        text=True,
        check=True,
    )
    fixtures: dict[str, str] = json.loads(done.stdout)
    return fixtures


# -- measuring one process ------------------------------------------------------------------


# As installed: modules load from their bytecode cache (a shell that sets
# PYTHONDONTWRITEBYTECODE would make every run recompile ~900 modules, 0.3-0.8 s).
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    child = subprocess.Popen(
        argv, cwd=cwd, env=_ENV if env is None else env, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    assert child.stderr is not None
    stderr = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    return {
        "wall_s": wall,
        # CPU time as well: on a shared machine wall time carries everyone's load.
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mib": usage.ru_maxrss / 1024,
        "exit": child.returncode,
        "stderr": stderr.decode("utf-8", "replace")[-2000:],
    }


NO_HISTORY = "--no-history"  # the formats' and the sweep's own cost (see the docstring)


def parse_argv(export: str) -> list[str]:
    return [sys.executable, "-c", f"import json; json.load(open({export!r}, encoding='utf-8'))"]


def audit_argv(fixtures: dict[str, str], fmt: str, out: Path) -> list[str]:
    return [
        str(CLOUDGUARD),
        "audit",
        "--inventory",
        fixtures["export"],
        "--controller-home",
        fixtures["home"],
        "--repo",
        fixtures["repo"],
        "--format",
        fmt,
        "--output",
        str(out),
    ]


# -- the live sweep: the same fleet from the fake ARM ---------------------------------------


def serve_fake(conn: Any, vms: int) -> None:
    from cloudguard_azure.fake_arm import ArmState, Faults, serve

    state = ArmState()
    per_sub = vms // len(SUBSCRIPTIONS)
    state.seed_fleet(
        SUBSCRIPTIONS, 50, max(per_sub // 50, 1), tags={"task-id": "task-000001", "owner": "f"}
    )
    with serve(state, Faults(page_size=200)) as arm:
        conn.send((arm.base_url, arm.ca_pem, len(state.vms)))
        conn.recv()


def live_argv(base_url: str, ca_pem: str, fixtures: dict[str, str], out: Path) -> list[str]:
    subscriptions = [arg for sub in SUBSCRIPTIONS for arg in ("--subscription", sub)]
    return [
        str(CLOUDGUARD),
        "audit",
        NO_HISTORY,
        "--kind",  # the VMs, as the export holds (a live sweep reads every kind by default)
        "vm",
        "--provider",
        "azure",
        "--credential",
        "fake-arm",
        *subscriptions,
        "--management-endpoint",
        base_url,
        "--ca-bundle",
        ca_pem,
        "--controller-home",
        fixtures["home"],
        "--format",
        "json",
        "--output",
        str(out),
    ]


# -- the run ----------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vms", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--no-live", action="store_true")
    parser.add_argument("--make-fixtures", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.make_fixtures:
        print(json.dumps(make_fixtures(Path(args.make_fixtures), args.vms)))
        return 0

    _ENV["XDG_STATE_HOME"] = str(own_state_directory())  # the history: never the user's
    LOAD_BEFORE[:] = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-audit-cli-") as tmp:
        root = Path(tmp)
        # Warm-up on a tiny fleet: bytecode caches written, file caches hot.
        warm = make_fixtures_apart(root / "warm", 20)
        for fmt in TIME_GOAL:
            measure([*audit_argv(warm, fmt, root / "warm" / "report"), NO_HISTORY], root)
        fixtures = make_fixtures_apart(root / "fleet", args.vms)
        size_mib = Path(fixtures["export"]).stat().st_size / 2**20
        commands = {"parse (json.load)": parse_argv(fixtures["export"])}
        for fmt in TIME_GOAL:
            commands[fmt] = [*audit_argv(fixtures, fmt, root / f"report.{fmt}"), NO_HISTORY]
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, argv in commands.items():
                runs[name].append(measure(argv, root))
        live: dict[str, Any] | None = None
        if not args.no_live:
            live = _live(root, fixtures, args.vms)

    failed = [n for n, rs in runs.items() if any(r["exit"] not in (0, 1) for r in rs)]
    for name in failed:
        print(f"{name} failed: {runs[name][-1]['stderr']}", file=sys.stderr)
    if failed:
        return 1
    figures = {
        name: {
            "wall_s": statistics.median(r["wall_s"] for r in rs),
            "cpu_s": statistics.median(r["cpu_s"] for r in rs),
            "peak_rss_mib": statistics.median(r["peak_rss_mib"] for r in rs),
            "exit": rs[-1]["exit"],
        }
        for name, rs in runs.items()
    }
    if live is not None:
        figures["live sweep (fake ARM)"] = live
    base = figures["parse (json.load)"]
    met = True
    print(
        f"{args.vms:,} VMs (`az vm list -d` export, {size_mib:.0f} MiB), controller home, "
        f"repo and fixtures given; median of {args.rounds} alternating round(s).\n"
    )
    print(f"Load average before the run: {LOAD_BEFORE[0]:.1f} (on {os.cpu_count()} CPUs).\n")
    print("| command | wall (s) | × parse | CPU (s) | × parse | peak RSS (MiB) | × parse | goal |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name, f in figures.items():
        time_ratio = f["wall_s"] / base["wall_s"]
        cpu_ratio = f["cpu_s"] / base["cpu_s"]
        rss_ratio = f["peak_rss_mib"] / base["peak_rss_mib"]
        f["time_ratio"], f["cpu_ratio"], f["rss_ratio"] = time_ratio, cpu_ratio, rss_ratio
        goal = ""
        if name in TIME_GOAL:
            ok = time_ratio <= TIME_GOAL[name] and rss_ratio <= RSS_GOAL
            verdict = "met" if ok else "NOT met"
            goal = f"≤ {TIME_GOAL[name]:.0f}× time, ≤ {RSS_GOAL:.0f}× RSS: {verdict}"
            met &= ok
        elif name.startswith("live"):
            ok = rss_ratio <= RSS_GOAL
            goal = f"≤ {RSS_GOAL:.0f}× RSS: {'met' if ok else 'NOT met'}"
            met &= ok
        print(
            f"| {name} | {f['wall_s']:.2f} | {time_ratio:.2f}× | {f['cpu_s']:.2f} | "
            f"{cpu_ratio:.2f}× | {f['peak_rss_mib']:.0f} | {rss_ratio:.2f}× | {goal} |"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "audit_cli",
                "python": platform.python_version(),
                "machine": platform.machine(),
                "vms": args.vms,
                "export_mib": size_mib,
                "rounds": args.rounds,
                "load_average_before": LOAD_BEFORE[0],
                "figures": figures,
                "targets_met": met,
            },
            indent=2,
        )
        + "\n"
    )
    return 0 if met else 1


def _live(root: Path, fixtures: dict[str, str], vms: int) -> dict[str, Any]:
    parent, child = multiprocessing.Pipe()
    server = multiprocessing.Process(target=serve_fake, args=(child, vms), daemon=True)
    server.start()
    try:
        base_url, ca_pem, made = parent.recv()
        result = measure(live_argv(base_url, ca_pem, fixtures, root / "live.json"), root)
        parent.send("stop")
    finally:
        server.join(timeout=10)
        if server.is_alive():
            server.terminate()
    if result["exit"] not in (0, 1):
        raise SystemExit(f"live sweep failed: {result['stderr']}")
    document = json.loads((root / "live.json").read_text(encoding="utf-8"))
    if document["summary"]["resources"] != made:
        raise SystemExit(f"live sweep saw {document['summary']['resources']} of {made} VMs")
    return {
        "wall_s": result["wall_s"],
        "cpu_s": result["cpu_s"],
        "peak_rss_mib": result["peak_rss_mib"],
        "vms": made,
    }


if __name__ == "__main__":
    sys.exit(main())

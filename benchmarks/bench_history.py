"""The history store's cost: recording 100,000 findings, and a year of nightly history.

1. Recording one audit of 100,000 findings (every one new, then every one
   seen again, then with 10% churn) into SQLite and into PostgreSQL, beside
   the audit engine's own time on the same fleet in the same run: the ratio
   is what the history adds to an audit.
2. A year of nightly audits (365 runs of HISTORY_FINDINGS findings, 2% of
   them replaced each night), then the questions a report and `cloudguard
   history` ask of it: recording the next night (which reads what the report
   says: new / still / gone / back), the 90-day trend, repeat offenders, the
   runs, cost by month, one resource's timeline.
3. The whole `cloudguard audit` on a 100,000-VM export (bench_audit_cli's
   fixtures: a controller home and a repository), `--no-history` beside the
   history's first and second night (SQLite, the default), alternating.

`--parts store,year,cli` picks some (default: all).

PostgreSQL is a throwaway server started here (tests/history/postgres_server.py),
fsync off as in the tests, on the same machine. Prints markdown tables and
writes benchmarks/results/history.json.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "history"))

from bench_audit_classify import Static, fleet  # noqa: E402
from own_state import own_state_directory  # noqa: E402
from postgres_server import PostgresServer  # noqa: E402

from cloudguard.audit.auditor import run_audit  # noqa: E402
from cloudguard.audit.cost import bundled_prices  # noqa: E402
from cloudguard.audit.evidence.interface import EvidenceRequest  # noqa: E402
from cloudguard.documents.findings import AuditPolicy, Finding  # noqa: E402
from cloudguard.history.location import open_store  # noqa: E402
from cloudguard.history.store import HistoryStore  # noqa: E402
from cloudguard.history.store_records import AuditRun, Observation, ResourceKey  # noqa: E402

FINDINGS = 100_000
HISTORY_FINDINGS = int(os.environ.get("BENCH_HISTORY_FINDINGS", "10000"))
NIGHTS = int(os.environ.get("BENCH_HISTORY_NIGHTS", "365"))
CHURN = 0.02
REPEATS = 3
NOW = datetime(2025, 6, 1, tzinfo=UTC)
RESULTS = HERE / "results" / "history.json"


def observations(findings: Iterable[Finding]) -> list[Observation]:
    return [
        Observation(
            key=ResourceKey(f.resource.provider, f.resource.account, f.resource.id.casefold(), ""),
            display_id=f.resource.id,
            name=f.resource.name,
            kind=f.resource.kind,
            task_id=f.task_id,
            verdict=f.verdict,
            reasons=f.reasons,
            billable=f.cost.billable,
            hourly=f.cost.hourly,
        )
        for f in findings
    ]


def timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def best(fn: Callable[[], Any], repeats: int = REPEATS) -> float:
    return min(timed(fn) for _ in range(repeats))


def recording(audit_seconds: float, stores: dict[str, Callable[[], HistoryStore]]) -> list[dict]:
    # 10% of the resources are untagged (not findings): 111,112 resources, 100,000 findings.
    resources = fleet(FINDINGS * 10 // 9 + 2)
    report = run_audit([Static(resources)], EvidenceRequest(), AuditPolicy(), bundled_prices(), NOW)
    first = observations(report.findings)[:FINDINGS]
    churned = first[FINDINGS // 10 :] + [
        o._replace(key=ResourceKey("azure", "s", f"churn-{n}", ""))
        for n, o in enumerate(first[: FINDINGS // 10])
    ]
    rows = []
    for backend, make in stores.items():
        with make() as store:
            for label, day, batch in (
                ("every finding new", 0, first),
                ("every finding seen again", 1, first),
                ("10% gone, 10% new", 2, churned),
            ):
                run = AuditRun(NOW + timedelta(days=day), "nightly", True, 1, "USD")
                seconds = timed(lambda r=run, b=batch: store.record_audit(r, b))
                rows.append({"backend": backend, "what": label, "seconds": seconds,
                             "ratio": seconds / audit_seconds})  # fmt: skip
    return rows


def night(n: int) -> list[Observation]:
    """Night n's findings: HISTORY_FINDINGS of them, 2% replaced each night."""
    replaced = int(HISTORY_FINDINGS * CHURN)
    start = n * replaced
    return [_observation(i) for i in range(start, start + HISTORY_FINDINGS)]


def _observation(i: int) -> Observation:
    name = f"vm-{i}"
    return Observation(
        key=ResourceKey("azure", "sub", f"/subscriptions/sub/vms/{name}", ""),
        display_id=f"/subscriptions/sub/vms/{name}",
        name=name,
        kind="vm",
        task_id=f"task-{i % 997}",
        verdict="orphan" if i % 5 == 0 else "ok",
        reasons=("no-controller-record",) if i % 5 == 0 else (),
        billable=i % 4 != 1,
        hourly=0.172,
    )


def a_year(stores: dict[str, Callable[[], HistoryStore]]) -> list[dict]:
    start = NOW - timedelta(days=NIGHTS)
    rows = []
    for backend, make in stores.items():
        with make() as store:
            build = []
            for n in range(NIGHTS):
                run = AuditRun(start + timedelta(days=n), "nightly", True, 1, "USD")
                batch = night(n)
                build.append(timed(lambda r=run, b=batch: store.record_audit(r, b)))
            recorded = []
            for n in range(NIGHTS, NIGHTS + REPEATS):
                run = AuditRun(start + timedelta(days=n), "nightly", True, 1, "USD")
                batch = night(n)
                recorded.append(timed(lambda r=run, b=batch: store.record_audit(r, b)))
            some = night(NIGHTS)[0].display_id
            questions = {
                "record the next night (new / still / gone / back)": statistics.median(recorded),
                "trend: last 90 days": best(lambda: store.trend(NOW - timedelta(days=90))),
                "repeat offenders (top 10)": best(lambda: store.offenders(10)),
                "runs (last 30)": best(lambda: store.runs(30)),
                "cost by month": best(store.cost_by_month),
                "one resource's timeline": best(lambda s=some: store.timeline(s)),
            }
            rows.append({"backend": backend, "what": "one night recorded while building (median)",
                         "seconds": statistics.median(build)})  # fmt: skip
            rows += [{"backend": backend, "what": k, "seconds": v} for k, v in questions.items()]
    return rows


def whole_cli(root: Path) -> list[dict]:
    """`cloudguard audit` on the same export, without and with its history, alternating; each
    round with a store of its own in `root`."""
    import bench_audit_cli as cli

    fixtures = cli.make_fixtures_apart(root / "fixtures", FINDINGS)
    rows = []
    for attempt in range(2):
        cli._ENV["XDG_STATE_HOME"] = str(root / f"state-{attempt}")
        for label, extra in (("--no-history", ["--no-history"]), ("history, first night", []),
                             ("history, next night", [])):  # fmt: skip
            argv = [*cli.audit_argv(fixtures, "json", root / "out.json"), *extra]
            measured = cli.measure(argv, root)
            assert measured["exit"] in (0, 1), measured["stderr"]
            rows.append({"what": label, "attempt": attempt, **measured})
    return rows


def main() -> int:
    scratch = own_state_directory()  # the stores, and anything else cloudguard keeps
    parts = {"store", "year", "cli"}
    if "--parts" in sys.argv:
        parts = set(sys.argv[sys.argv.index("--parts") + 1].split(","))
    results: dict[str, Any] = {}
    if "cli" in parts:
        results["cli"] = whole_cli(scratch)
        print(f"cloudguard audit, {FINDINGS:,}-VM export, --format json (two rounds)\n")
        print("| run | wall (s) | CPU (s) | peak RSS (MiB) |")
        print("|---|---:|---:|---:|")
        for row in results["cli"]:
            print(f"| {row['what']} | {row['wall_s']:.2f} | {row['cpu_s']:.2f} | "
                  f"{row['peak_rss_mib']:.0f} |")  # fmt: skip
    if parts & {"store", "year"}:
        results.update(store_and_year(parts, scratch))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "benchmark": "history", "findings": FINDINGS, "history_findings": HISTORY_FINDINGS,
        "nights": NIGHTS, "python": sys.version.split()[0], "machine": platform.machine(),
        **results}, indent=2))  # fmt: skip
    return 0


def store_and_year(parts: set[str], scratch: Path) -> dict[str, Any]:
    inventory, prices = Static(fleet(FINDINGS * 10 // 9 + 2)), bundled_prices()
    audit_seconds = best(
        lambda: run_audit([inventory], EvidenceRequest(), AuditPolicy(), prices, NOW)
    )
    server = PostgresServer().start()
    try:

        def stores() -> dict[str, Callable[[], HistoryStore]]:
            name = uuid.uuid4().hex[:8]
            return {
                "sqlite": lambda: open_store(scratch / f"{name}.sqlite3"),
                "postgresql": lambda: open_store(server.create_database(f"b_{name}")),
            }

        recorded = recording(audit_seconds, stores()) if "store" in parts else []
        year = a_year(stores()) if "year" in parts else []
        sizes = {p.name: p.stat().st_size for p in scratch.iterdir() if p.suffix == ".sqlite3"}
    finally:
        server.stop()
    print(f"audit engine on {FINDINGS:,} findings (best of {REPEATS}): {audit_seconds:.3f} s\n")
    print("| backend | recording 100,000 findings | seconds | × the audit engine |")
    print("|---|---|---:|---:|")
    for row in recorded:
        print(f"| {row['backend']} | {row['what']} | {row['seconds']:.3f} | {row['ratio']:.2f}× |")
    print(f"\nA year: {NIGHTS} nightly audits of {HISTORY_FINDINGS:,} findings "
          f"({CHURN:.0%} replaced each night)\n")  # fmt: skip
    print("| backend | question | seconds |")
    print("|---|---|---:|")
    for row in year:
        print(f"| {row['backend']} | {row['what']} | {row['seconds']:.4f} |")
    print(f"\nSQLite files: { {k: f'{v / 2**20:.0f} MiB' for k, v in sizes.items()} }")
    return {"audit_seconds": audit_seconds, "recording": recorded, "year": year,
            "sqlite_bytes": sizes}  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())

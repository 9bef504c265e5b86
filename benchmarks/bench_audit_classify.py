"""Classification of 100,000 resources: time and throughput.

Measures the pure `classify` loop and the whole engine (in-memory inventory,
evidence already resolved) side by side in one run; machines here are noisy,
so each is the best of several repeats. Prints a markdown table and writes
benchmarks/results/audit_classify.json.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cloudguard.audit.auditor import run_audit
from cloudguard.audit.classify import classify
from cloudguard.audit.cost import bundled_prices
from cloudguard.audit.evidence.interface import (
    Evidence,
    EvidenceRequest,
    GenerationCheck,
    GenerationStatus,
)
from cloudguard.cloud.records import Resource, SweepResult
from cloudguard.documents.findings import AuditPolicy

RESOURCES = 100_000
REPEATS = 5
NOW = datetime(2025, 6, 1, tzinfo=UTC)
RESULTS = Path(__file__).resolve().parent / "results" / "audit_classify.json"


def fleet(count: int) -> list[Resource]:
    sizes = ["Standard_D4as_v6", "Standard_B2s", "Standard_Unpriced", "Standard_D2s_v5"]
    powers = ["running", "deallocated", "stopped", "running"]
    resources = []
    for i in range(count):
        tags = (
            {}
            if i % 10 == 9
            else {"Task-Id": f"task-{i % 40_000}", "repository-generation": f"{i % 5_000:040x}"}
        )
        resources.append(
            Resource(
                provider="azure",
                account="00000000-0000-0000-0000-000000000000",
                region="eastus",
                group="pilot",
                id=f"/subscriptions/s/resourceGroups/pilot/providers/Microsoft.Compute/virtualMachines/vm-{i}",
                name=f"vm-{i}",
                kind="vm",
                size=sizes[i % 4],
                power_state=powers[i % 4],
                created=NOW - timedelta(minutes=i % 600),
                tags=tags,
            )
        )
    return resources


def evidence() -> Evidence:
    generations = {
        f"{g:040x}": GenerationCheck(
            GenerationStatus.COMMIT if g % 7 else GenerationStatus.NOT_A_COMMIT, "x"
        )
        for g in range(5_000)
    }
    return Evidence(
        controller_tasks=frozenset(f"task-{t}" for t in range(0, 40_000, 2)),
        fixture_ids=frozenset(f"task-{t}" for t in range(0, 40_000, 97)),
        generations=generations,
    )


class Static:
    def __init__(self, resources: list[Resource]) -> None:
        self.result = SweepResult(resources=tuple(resources))

    def read(self) -> SweepResult:
        return self.result


def best(fn) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    resources = fleet(RESOURCES)
    ev, policy, prices = evidence(), AuditPolicy(), bundled_prices()
    verdicts = Counter(
        f.verdict for r in resources if (f := classify(r, ev, policy, prices, NOW)) is not None
    )

    def classify_all() -> None:
        for r in resources:
            classify(r, ev, policy, prices, NOW)

    # The engine with no evidence sources configured: reads, classifies, counts.
    inventory = Static(resources)

    def engine() -> None:
        run_audit([inventory], EvidenceRequest(), policy, prices, NOW)

    rows = [("classify() loop", best(classify_all)), ("run_audit (engine)", best(engine))]
    print(f"{RESOURCES:,} resources, best of {REPEATS}; verdicts: {dict(verdicts)}\n")
    print("| what | seconds | resources/s | µs/resource |")
    print("|---|---:|---:|---:|")
    for name, seconds in rows:
        print(
            f"| {name} | {seconds:.3f} | {RESOURCES / seconds:,.0f} | "
            f"{seconds / RESOURCES * 1e6:.2f} |"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "audit_classify",
                "resources": RESOURCES,
                "repeats": REPEATS,
                "python": sys.version.split()[0],
                "machine": platform.machine(),
                "verdicts": dict(verdicts),
                "results": [
                    {"what": name, "seconds": seconds, "per_second": RESOURCES / seconds}
                    for name, seconds in rows
                ],
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

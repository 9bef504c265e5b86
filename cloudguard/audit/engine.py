"""The engine: inventories + evidence -> an `AuditReport`, and the report's exit code.

It reads every inventory, asks each evidence source once about all the
distinct task ids and generations it saw, then classifies each resource.
Anything unreadable is a `SourceFailure` in the report (exit 75), and the
evidence it would have given is "not checked", so a failure never turns into
a false "ok" or a false "orphan".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from cloudguard import exit_codes
from cloudguard.audit.classify import classify
from cloudguard.audit.cost import PriceTable
from cloudguard.audit.evidence import (
    Evidence,
    EvidenceError,
    GenerationCheck,
    check_generations,
    controller_home_tasks,
    exported_controller_tasks,
    load_fixture_corpus,
)
from cloudguard.audit.findings import (
    LEAKED,
    ORPHAN,
    SUSPECT,
    AuditReport,
    Finding,
    Policy,
)
from cloudguard.audit.model import Inventory, Resource, SourceFailure

# progress(stage, done, total): the CLI draws a bar from it when stderr is a TTY.
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class EvidenceSources:
    controller_home: str | None = None
    controller_records: str | None = None  # a file, or "-" for stdin
    repo: str | None = None
    fixtures_from: tuple[str, ...] = ()  # empty: <repo>/tests when there is a repo
    fixture_ids: tuple[str, ...] = ()


def _quiet(stage: str, done: int, total: int) -> None:
    pass


def run_audit(
    inventories: Sequence[Inventory],
    sources: EvidenceSources,
    policy: Policy,
    prices: PriceTable,
    now: datetime,
    progress: Progress = _quiet,
) -> AuditReport:
    failures: list[SourceFailure] = []
    resources: list[Resource] = []
    for done, inventory in enumerate(inventories):
        progress("inventories", done, len(inventories))
        result = inventory.read()
        resources.extend(result.resources)
        failures.extend(result.failures)
    progress("inventories", len(inventories), len(inventories))

    fleet = [r for r in resources if r.tag(policy.task_tag) is not None]
    task_ids = {t for r in fleet if (t := r.tag(policy.task_tag)) is not None}
    generations = {g for r in fleet if (g := r.tag(policy.generation_tag)) is not None}
    checked: dict[str, str] = {}
    evidence = Evidence(
        controller_tasks=_controller(sources, failures, checked),
        fixture_ids=_fixtures(sources, task_ids, failures, checked),
        generations=_generations(sources, generations, failures, checked),
    )

    findings: list[Finding] = []
    step = max(len(resources) // 100, 1)
    for index, resource in enumerate(resources):
        if index % step == 0:
            progress("classify", index, len(resources))
        finding = classify(resource, evidence, policy, prices, now)
        if finding is not None:
            findings.append(finding)
    progress("classify", len(resources), len(resources))

    return AuditReport(
        generated_at=now,
        policy=policy,
        findings=tuple(findings),
        resources_seen=len(resources),
        untagged=sum(1 for r in resources if r.tag(policy.task_tag) is None),
        failures=tuple(failures),
        evidence_checked=checked,
        prices=prices.info,
    )


def _controller(
    sources: EvidenceSources, failures: list[SourceFailure], checked: dict[str, str]
) -> frozenset[str] | None:
    if sources.controller_home is None and sources.controller_records is None:
        checked["controller-records"] = "not checked (no --controller-home or --controller-records)"
        return None
    tasks: set[str] = set()
    read: list[str] = []
    try:
        if sources.controller_home is not None:
            tasks |= controller_home_tasks(sources.controller_home)
            read.append(f"controller home {sources.controller_home}")
        if sources.controller_records is not None:
            tasks |= exported_controller_tasks(sources.controller_records)
            read.append(f"controller records {sources.controller_records}")
    except EvidenceError as exc:
        failures.append(SourceFailure(exc.source, exc.reason))
        checked["controller-records"] = f"not checked ({exc.source} unreadable)"
        return None
    checked["controller-records"] = "; ".join(read)
    return frozenset(tasks)


def _fixtures(
    sources: EvidenceSources,
    task_ids: set[str],
    failures: list[SourceFailure],
    checked: dict[str, str],
) -> frozenset[str] | None:
    paths = list(sources.fixtures_from)
    if not paths and sources.repo is not None:
        default = Path(sources.repo) / "tests"
        if default.is_dir():
            paths.append(str(default))
    if not paths and not sources.fixture_ids:
        checked["fixture-ids"] = "not checked (no --fixtures-from, --fixture-ids or <repo>/tests)"
        return None
    try:
        corpus = load_fixture_corpus(paths, sources.fixture_ids)
    except EvidenceError as exc:
        failures.append(SourceFailure(exc.source, exc.reason))
        checked["fixture-ids"] = f"not checked ({exc.source} unreadable)"
        return None
    checked["fixture-ids"] = ", ".join([*paths, *sources.fixture_ids])
    return corpus.fixture_ids(task_ids)


def _generations(
    sources: EvidenceSources,
    generations: set[str],
    failures: list[SourceFailure],
    checked: dict[str, str],
) -> dict[str, GenerationCheck] | None:
    if sources.repo is None:
        checked["repository-generations"] = "not checked (no --repo)"
        return None
    try:
        result = check_generations(sources.repo, sorted(generations))
    except EvidenceError as exc:
        failures.append(SourceFailure(exc.source, exc.reason))
        checked["repository-generations"] = f"not checked ({exc.source} unreadable)"
        return None
    checked["repository-generations"] = f"repository {sources.repo}"
    return result


def exit_code(report: AuditReport) -> int:
    """75 when any source was unreadable (even with orphans found: the audit is
    incomplete), 1 for leaked/orphans (and suspects with fail-on suspect), else 0."""
    if report.failures:
        return exit_codes.DID_NOT_RUN
    failing = {LEAKED, ORPHAN} | ({SUSPECT} if report.policy.fail_on == SUSPECT else set())
    if any(f.verdict in failing for f in report.findings):
        return exit_codes.ORPHANS_FOUND
    return exit_codes.CLEAN

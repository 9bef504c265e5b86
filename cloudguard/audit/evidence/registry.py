"""The registry of evidence sources, and gathering them into one `Evidence`.

`SOURCES` is the one place a source is registered: its name (the report's
"evidence checked" key) -> its factory. The order is the report's order, and
among owned-id sources the order in which a finding's `owned-by-*` reason is
picked when several own the same id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cloudguard.audit import fleet_evidence, owned_ids, terraform_state
from cloudguard.audit.evidence import Evidence, EvidenceError, GenerationCheck
from cloudguard.audit.evidence_interface import NotSupplied, Question, SourceFactory
from cloudguard.audit.model import SourceFailure

if TYPE_CHECKING:
    from collections.abc import Mapping

    from cloudguard.audit.engine import EvidenceSources

SOURCES: dict[str, SourceFactory] = {
    "controller-records": fleet_evidence.controller_records,
    "fixture-ids": fleet_evidence.fixture_ids,
    "repository-generations": fleet_evidence.repository_generations,
    "terraform-state": terraform_state.terraform_state,
    "owned-ids-command": owned_ids.owned_ids_command,
    "owned-ids-file": owned_ids.owned_ids_files,
}


@dataclass(frozen=True)
class Gathered:
    evidence: Evidence
    checked: dict[str, str]  # source name -> what was read, or "not checked (why)"
    failures: tuple[SourceFailure, ...]  # supplied sources that could not be read


def gather(options: EvidenceSources, question: Question) -> Gathered:
    """Ask every registered source once. An unreadable source is a failure and
    gives no facts: what it would have said is "not checked", never passed."""
    checked: dict[str, str] = {}
    failures: list[SourceFailure] = []
    controller_tasks: frozenset[str] | None = None
    fixture_ids: frozenset[str] | None = None
    generations: Mapping[str, GenerationCheck] | None = None
    owned: list[tuple[str, frozenset[str]]] = []
    ownership_unread: list[str] = []
    for name, factory in SOURCES.items():
        source = factory(options)
        if isinstance(source, NotSupplied):
            checked[name] = f"not checked ({source.why})"
            continue
        try:
            facts = source.facts(question)
        except EvidenceError as exc:
            failures.append(SourceFailure(exc.source, exc.reason))
            checked[name] = f"not checked ({exc.source} unreadable)"
            if source.proves_ownership:
                ownership_unread.append(name)
            continue
        checked[name] = source.reads
        if facts.controller_tasks is not None:
            controller_tasks = (controller_tasks or frozenset()) | facts.controller_tasks
        if facts.fixture_ids is not None:
            fixture_ids = (fixture_ids or frozenset()) | facts.fixture_ids
        if facts.generations is not None:
            generations = {**(generations or {}), **facts.generations}
        if facts.owned_ids is not None:
            owned.append((name, facts.owned_ids))
    evidence = Evidence(
        controller_tasks=controller_tasks,
        fixture_ids=fixture_ids,
        generations=generations,
        owned_ids=tuple(owned),
        ownership_unread=tuple(ownership_unread),
    )
    return Gathered(evidence, checked, tuple(failures))

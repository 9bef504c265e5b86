"""The registry of evidence sources, and gathering them into one `Evidence`.

`SOURCES` is the one place a source is registered: its name (the report's
"evidence checked" key) -> its factory (a `Factory`, which also declares the
source's options: flags of `audit` and `reap apply`, keys of cloudguard.toml).
The order is the report's order, and among owned-id sources the order in
which a finding's `owned-by-*` reason is picked when several own the same id.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cloudguard.audit.evidence import (
    controller_records,
    fixture_ids,
    owned_ids_file,
    owned_ids_program,
    repository_generations,
    terraform_state,
)
from cloudguard.audit.evidence.interface import (
    Evidence,
    EvidenceError,
    EvidenceRequest,
    GenerationCheck,
    NotSupplied,
    Question,
    SourceFactory,
)
from cloudguard.cloud.options import Option
from cloudguard.cloud.records import SourceFailure

SOURCES: dict[str, SourceFactory] = {
    "controller-records": controller_records.FACTORY,
    "fixture-ids": fixture_ids.FACTORY,
    "repository-generations": repository_generations.FACTORY,
    "terraform-state": terraform_state.FACTORY,
    "owned-ids-command": owned_ids_program.FACTORY,
    "owned-ids-file": owned_ids_file.FACTORY,
}


def evidence_options() -> tuple[Option, ...]:
    """Every registered source's options, in registration order."""
    return tuple(
        option for factory in SOURCES.values() for option in getattr(factory, "options", ())
    )


def locations(request: EvidenceRequest) -> dict[str, Any]:
    """Where the request's evidence is read from: each locating option that was given (its
    key -> its value, paths made absolute, lists as lists). A reap plan binds the audit's,
    and `reap apply` must name the same: the same controller home, repository, corpus and
    files are re-read, never others that would call a suspect an orphan."""
    found: dict[str, Any] = {}
    for option in evidence_options():
        value = request.value(option)
        if not option.locates or value is None or value == ():
            continue
        if option.many or isinstance(value, tuple):
            found[option.key] = [_located(option, item) for item in value]
        else:
            found[option.key] = _located(option, value)
    return found


def _located(option: Option, value: Any) -> Any:
    if option.path and isinstance(value, str) and value != "-":
        return os.path.normpath(os.path.abspath(os.path.expanduser(value)))
    return value


@dataclass(frozen=True)
class Gathered:
    evidence: Evidence
    checked: dict[str, str]  # source name -> what was read, or "not checked (why)"
    failures: tuple[SourceFailure, ...]  # supplied sources that could not be read


def gather(request: EvidenceRequest, question: Question) -> Gathered:
    """Ask every registered source once. An unreadable source is a failure and
    gives no facts: what it would have said is "not checked", never passed."""
    _check_names(request)
    checked: dict[str, str] = {}
    failures: list[SourceFailure] = []
    controller_tasks: frozenset[str] | None = None
    fixture_ids_found: frozenset[str] | None = None
    generations: Mapping[str, GenerationCheck] | None = None
    owned: list[tuple[str, frozenset[str]]] = []
    ownership_unread: list[str] = []
    for name, factory in SOURCES.items():
        source = factory(request)
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
            fixture_ids_found = (fixture_ids_found or frozenset()) | facts.fixture_ids
        if facts.generations is not None:
            generations = {**(generations or {}), **facts.generations}
        if facts.owned_ids is not None:
            owned.append((name, facts.owned_ids))
    evidence = Evidence(
        controller_tasks=controller_tasks,
        fixture_ids=fixture_ids_found,
        generations=generations,
        owned_ids=tuple(owned),
        ownership_unread=tuple(ownership_unread),
    )
    return Gathered(evidence, checked, tuple(failures))


def _check_names(request: EvidenceRequest) -> None:
    """A value for an option no source declares would be silently unread: refuse it."""
    declared = {option.name for option in evidence_options()}
    if unknown := sorted(set(request.values) - declared):
        known = ", ".join(sorted(declared))
        raise ValueError(f"no evidence source takes {', '.join(unknown)} (declared: {known})")

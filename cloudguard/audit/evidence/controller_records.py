"""The fleet's own layout as evidence sources: controller records, fixture ids, generations.

Thin wrappers over the readers in `evidence.py`, so each is an
`EvidenceSource` the engine gathers like any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cloudguard.audit.evidence import (
    check_generations,
    controller_home_tasks,
    exported_controller_tasks,
    load_fixture_corpus,
)
from cloudguard.audit.evidence_interface import EvidenceSource, Facts, NotSupplied, Question

if TYPE_CHECKING:
    from cloudguard.audit.engine import EvidenceSources


@dataclass(frozen=True)
class ControllerRecords:
    home: str | None
    records: str | None  # a file, or "-" for stdin
    name: str = "controller-records"
    proves_ownership: bool = False

    @property
    def reads(self) -> str:
        read = []
        if self.home is not None:
            read.append(f"controller home {self.home}")
        if self.records is not None:
            read.append(f"controller records {self.records}")
        return "; ".join(read)

    def facts(self, question: Question) -> Facts:
        tasks: set[str] = set()
        if self.home is not None:
            tasks |= controller_home_tasks(self.home)
        if self.records is not None:
            tasks |= exported_controller_tasks(self.records)
        return Facts(controller_tasks=frozenset(tasks))


def controller_records(options: EvidenceSources) -> EvidenceSource | NotSupplied:
    if options.controller_home is None and options.controller_records is None:
        return NotSupplied("no --controller-home or --controller-records")
    return ControllerRecords(options.controller_home, options.controller_records)


@dataclass(frozen=True)
class FixtureIds:
    paths: tuple[str, ...]
    ids_files: tuple[str, ...]
    name: str = "fixture-ids"
    proves_ownership: bool = False

    @property
    def reads(self) -> str:
        return ", ".join([*self.paths, *self.ids_files])

    def facts(self, question: Question) -> Facts:
        corpus = load_fixture_corpus(self.paths, self.ids_files)
        return Facts(fixture_ids=corpus.fixture_ids(question.task_ids))


def fixture_ids(options: EvidenceSources) -> EvidenceSource | NotSupplied:
    paths = list(options.fixtures_from)
    if not paths and options.repo is not None:
        default = Path(options.repo) / "tests"
        if default.is_dir():
            paths.append(str(default))
    if not paths and not options.fixture_ids:
        return NotSupplied("no --fixtures-from, --fixture-ids or <repo>/tests")
    return FixtureIds(tuple(paths), tuple(options.fixture_ids))


@dataclass(frozen=True)
class RepositoryGenerations:
    repo: str
    name: str = "repository-generations"
    proves_ownership: bool = False

    @property
    def reads(self) -> str:
        return f"repository {self.repo}"

    def facts(self, question: Question) -> Facts:
        return Facts(generations=check_generations(self.repo, sorted(question.generations)))


def repository_generations(options: EvidenceSources) -> EvidenceSource | NotSupplied:
    if options.repo is None:
        return NotSupplied("no --repo")
    return RepositoryGenerations(options.repo)

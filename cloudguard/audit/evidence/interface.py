"""The `EvidenceSource` interface: one supplied source of evidence, read once per audit.

A source has a name (its key in the report's "evidence checked" lines), says
what it reads, and answers one `Question` with `Facts`, or raises
`EvidenceError` when it was supplied but cannot be read (the audit did not
run: 75). A source the operator did not supply is not built at all: its
factory returns `NotSupplied` with the reason, and the report says "not
checked (why)", never "passed".

Adding a source is one module (a factory and a class) plus one line in
`evidence_sources.SOURCES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from cloudguard.audit.evidence import EvidenceError, GenerationCheck

if TYPE_CHECKING:
    from cloudguard.audit.engine import EvidenceSources

__all__ = [
    "EvidenceError",
    "EvidenceSource",
    "Facts",
    "NotSupplied",
    "Question",
    "SourceFactory",
]


@dataclass(frozen=True)
class Question:
    """What the engine asks every source, once: the distinct values the fleet carries."""

    task_ids: frozenset[str] = frozenset()
    generations: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Facts:
    """What one source established. None: this source says nothing about that."""

    controller_tasks: frozenset[str] | None = None
    fixture_ids: frozenset[str] | None = None
    generations: Mapping[str, GenerationCheck] | None = None
    owned_ids: frozenset[str] | None = None  # cloud ids, as `evidence.cloud_id_key` gives them


@dataclass(frozen=True)
class NotSupplied:
    """Why a source was not checked, e.g. "no --terraform-state"."""

    why: str


class EvidenceSource(Protocol):
    @property
    def name(self) -> str:
        """The key of its "evidence checked" line, e.g. `terraform-state`."""
        ...

    @property
    def reads(self) -> str:
        """What it reads, for the report, e.g. `terraform state infra/prod.tfstate`."""
        ...

    @property
    def proves_ownership(self) -> bool:
        """Whether its facts are owned ids: if it cannot be read, no VM lacking a
        controller record can be called an orphan (it might have owned it)."""
        ...

    def facts(self, question: Question) -> Facts:
        """The facts it establishes; raises `EvidenceError` naming what could not be read."""
        ...


# The audit's evidence options -> a source, or why it is not checked.
SourceFactory = Callable[["EvidenceSources"], "EvidenceSource | NotSupplied"]

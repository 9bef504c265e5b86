"""The evidence interface: what a source is asked, what it answers, what classification consults.

A source has a name (its key in the report's "evidence checked" lines), says
what it reads, and answers one `Question` with `Facts`, or raises
`EvidenceError` when it was supplied but cannot be read (the audit did not
run: 75). A source the operator did not supply is not built at all: its
factory returns `NotSupplied` with the reason, and the report says "not
checked (why)", never "passed".

A source is one module: its reader, its `EvidenceSource`, its options and a
`Factory` that builds it from the `EvidenceRequest` (those options' values);
registering it is one line in `source_registry.SOURCES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from cloudguard.cloud.options import Option


class EvidenceError(Exception):
    """A supplied evidence source could not be read."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.reason = reason


class GenerationStatus(Enum):
    COMMIT = "commit"
    NOT_A_COMMIT = "not-a-commit"  # -> unknown-generation
    UNVERIFIABLE = "unverifiable"  # absent, but the clone is shallow or partial


@dataclass(frozen=True)
class GenerationCheck:
    status: GenerationStatus
    detail: str


def cloud_id_key(cloud_id: str) -> str:
    """A cloud id in the form owned-id sources and inventories are compared in.

    Path-shaped ids (`/subscriptions/.../virtualMachines/vm-1`, ARM's) are
    case-insensitive: `az` prints a resource group upper-cased where Terraform
    state keeps it as written. Other ids (`i-0abc...`, `vol-...`) are exact.
    """
    cloud_id = cloud_id.strip()
    return cloud_id.casefold() if cloud_id.startswith("/") else cloud_id


@dataclass(frozen=True)
class Question:
    """What the auditor asks every source, once: the distinct values the fleet carries."""

    task_ids: frozenset[str] = frozenset()
    generations: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Facts:
    """What one source established. None: this source says nothing about that."""

    controller_tasks: frozenset[str] | None = None
    fixture_ids: frozenset[str] | None = None
    generations: Mapping[str, GenerationCheck] | None = None
    owned_ids: frozenset[str] | None = None  # cloud ids, as `cloud_id_key` gives them


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


@dataclass(frozen=True, init=False)
class EvidenceRequest:
    """The values of the evidence sources' options, by option name (`Option.name`); an
    option not given here has its declared default."""

    values: Mapping[str, Any]

    def __init__(self, **values: Any) -> None:
        object.__setattr__(self, "values", MappingProxyType(dict(values)))

    def value(self, option: Option) -> Any:
        return option.value_in(self.values)


@dataclass(frozen=True)
class Factory:
    """How a source is built from the request: its options, and `build`, which returns
    the source, or why it is not checked."""

    build: Callable[[EvidenceRequest], EvidenceSource | NotSupplied]
    options: tuple[Option, ...] = field(default=())

    def __call__(self, request: EvidenceRequest) -> EvidenceSource | NotSupplied:
        return self.build(request)


@dataclass(frozen=True)
class OwnedIdFiles:
    """A source whose facts are the cloud ids its files name, each file read by `read`
    (which raises `EvidenceError` naming a file it cannot read)."""

    name: str
    label: str  # how the report names one of its files, e.g. "terraform state"
    read: Callable[[str], frozenset[str]]
    paths: tuple[str, ...]
    proves_ownership: bool = True

    @property
    def reads(self) -> str:
        return ", ".join(f"{self.label} {path}" for path in self.paths)

    def facts(self, question: Question) -> Facts:
        owned: set[str] = set()
        for path in self.paths:
            owned |= self.read(path)
        return Facts(owned_ids=frozenset(owned))


# A source's factory: a `Factory`, or any callable of the request (a source with no options).
SourceFactory = Callable[[EvidenceRequest], "EvidenceSource | NotSupplied"]


@dataclass(frozen=True)
class Evidence:
    """Everything classification may consult. None means "not checked"."""

    controller_tasks: frozenset[str] | None = None
    fixture_ids: frozenset[str] | None = None
    generations: Mapping[str, GenerationCheck] | None = None
    # (source name, cloud ids it owns, as `cloud_id_key` gives them), in the
    # order the sources are registered. Empty: no owned-ids source was read.
    owned_ids: tuple[tuple[str, frozenset[str]], ...] = ()
    # Owned-id sources supplied but unreadable: any of them might own a VM
    # that has no controller record, so none may be called an orphan.
    ownership_unread: tuple[str, ...] = ()

    def owner_of(self, cloud_id: str) -> str | None:
        """The first source that owns `cloud_id`, or None."""
        key = cloud_id_key(cloud_id)
        for source, ids in self.owned_ids:
            if key in ids:
                return source
        return None

"""Records shared by inventories, evidence, the engine and the formats.

Frozen dataclasses only; no cloud SDK is imported here. Adapters (Azure, AWS)
and the offline inventory readers all produce `Resource` records, so the
engine never knows where a resource came from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from cloudguard.audit.adapter_registry import names_case_insensitive

# Normalised power states. "running" bills compute; the others do not
# (their disks still do).
POWER_STATES = (
    "running",
    "starting",
    "stopping",
    "stopped",
    "deallocating",
    "deallocated",
    "terminated",
    "unknown",
)


@dataclass(frozen=True, slots=True)
class Resource:
    """One cloud resource, normalised across providers.

    Slotted: an audit holds one per VM of the fleet (100,000 and more), so
    each costs its fields and no per-instance dict.
    """

    provider: str  # the adapter's name (cloudguard.adapters entry point): "azure", "aws", ...
    account: str  # the subscription / account id ("" when unknown)
    region: str
    group: str  # a grouping inside the account (Azure resource group), or ""
    id: str  # the cloud's id: ARM id / instance id / volume id
    name: str
    kind: str  # "vm" | "disk"
    size: str  # VM size / instance type / disk SKU ("" when unknown)
    power_state: str  # one of POWER_STATES
    created: datetime | None  # timezone-aware UTC, or None when unknown
    tags: Mapping[str, str] = field(default_factory=dict)
    source: str = ""  # where the record came from: a file path, "azure:<sub>", ...
    # The provider's unique id of this very resource (Azure vmId / disk uniqueId), which a
    # resource deleted and re-created under the same name does not share; "" when unknown.
    uid: str = ""

    def tag(self, name: str, *, case_insensitive: bool | None = None) -> str | None:
        """The value of tag `name`, compared as its cloud compares tag names (the adapter's
        `case_insensitive_names`: Azure's are case-insensitive)."""
        if case_insensitive is None:
            case_insensitive = names_case_insensitive(self.provider)
        if not case_insensitive:
            return self.tags.get(name)
        wanted = name.casefold()
        for key, value in self.tags.items():
            if key.casefold() == wanted:
                return value
        return None


@dataclass(frozen=True)
class SourceFailure:
    """An inventory or evidence source that could not be read: the audit did not run."""

    source: str  # e.g. "azure subscription 0000-...", "controller home /srv/fm"
    reason: str  # human readable, names the cause (HTTP 403, file missing, ...)


@dataclass(frozen=True)
class SweepRequest:
    """What a live adapter is asked to sweep (options it does not use are ignored)."""

    subscriptions: tuple[str, ...] = ()
    all_subscriptions: bool = False
    resource_groups: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    task_tag: str = "task-id"
    credential: str | None = None  # a specific credential to use, by name
    concurrency: int = 4
    retries: int = 10  # the retry budget: retries per request (throttling, 5xx, resets)
    endpoint: str | None = None  # management endpoint override (a local fake)
    ca_bundle: str | None = None  # CA bundle for `endpoint`
    engine: str = "auto"  # Azure: arm | resource-graph | auto (by subscription count)
    accounts_from: str | None = None  # AWS: "organizations" sweeps every active member account
    assume_role: str | None = None  # AWS: the role NAME assumed in each member account


@dataclass(frozen=True)
class SweepResult:
    resources: tuple[Resource, ...]
    failures: tuple[SourceFailure, ...] = ()


class Adapter(Protocol):
    """What a live inventory needs of an adapter: its sweep (the whole interface is
    `adapter_interface.CloudAdapter`)."""

    name: str

    def sweep(self, request: SweepRequest) -> SweepResult: ...


class Inventory(Protocol):
    """Anything that yields resources: an inventory file, a live adapter sweep."""

    def read(self) -> SweepResult: ...


def resources_of(results: Sequence[SweepResult]) -> tuple[Resource, ...]:
    return tuple(r for result in results for r in result.resources)

"""What the core knows of a cloud: one `CloudAdapter` object per cloud.

An adapter distribution registers a class under the `cloudguard.adapters`
entry-point group; the core instantiates it with no arguments and asks it
everything cloud-specific: how to sweep and how to reap, how to read its
CLI's JSON export, which power states bill, what reaping a kind of resource
is called there, whether tag names and ids compare case-insensitively, and
how to show where a resource lives. A new cloud is one package, no core edit
(tests/toycloud proves it). Stdlib only; no cloud is named here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from cloudguard.audit.model import Resource, SweepRequest, SweepResult
    from cloudguard.reap.model import Reaper


class InventoryFormatError(ValueError):
    """The document is JSON but no installed adapter's export we understand."""


class ExportParser(Protocol):
    """One CLI's JSON export of VMs, e.g. `az vm list -d -o json`.

    A top-level JSON list is read one entry at a time (a 100,000-VM export is
    never a tree in memory), so a parser claims entries; any other document is
    claimed whole. Claims of two parsers never overlap; a claimed entry that is
    malformed raises `InventoryFormatError` naming what is wrong.
    """

    description: str  # what the user runs to make it, for the "not an inventory" message
    entry_description: str  # what one list entry looks like, e.g. "an az VM object"

    def claims_entry(self, entry: Any) -> bool: ...

    def parse_entry(self, entry: Any, source: str) -> Iterable[Resource]: ...

    def claims_document(self, document: Any) -> bool: ...

    def parse_document(self, document: Any, source: str) -> Iterable[Resource]: ...


class CloudAdapter(Protocol):
    """One cloud, registered under the `cloudguard.adapters` entry-point group."""

    name: str  # the provider name: `--provider NAME`, `Resource.provider`

    # Live sides: the audit's sweep and `reap apply`'s reader/actor. Both use the
    # request's credential, endpoint and CA bundle, and nothing ambient besides.
    def sweep(self, request: SweepRequest) -> SweepResult: ...

    def reaper(self, request: SweepRequest) -> Reaper: ...

    # Offline inventories: the parsers of its CLI's JSON.
    export_parsers: tuple[ExportParser, ...]

    # Pricing. A power state not listed does not bill compute; `power_notes` says why a
    # billable state bills when the plain "compute bills" would mislead.
    billable_power_states: frozenset[str]
    power_notes: Mapping[str, str]
    # Hourly list prices by size for a cloud the bundled table does not price (same
    # currency and basis as the table); the bundled table wins for a cloud it lists.
    hourly_prices: Mapping[str, float]

    def price_key(self, size: str) -> str:
        """`size` as the price table spells it (Azure sizes come in any case)."""
        ...

    # Reaping: kind -> the operator's request (deallocate, delete) -> the cloud's verb.
    # A kind or request missing here is never acted on.
    reap_actions: Mapping[str, Mapping[str, str]]
    # True when a resource id is never given to another resource (the id is the identity).
    ids_never_reused: bool

    # Names: whether tag names and resource ids compare case-insensitively.
    case_insensitive_names: bool

    def scope_of(self, resource: Resource) -> str:
        """Where it lives, in one short cell (an Azure resource group, an AWS account)."""
        ...

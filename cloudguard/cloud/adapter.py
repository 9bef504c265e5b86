"""What the core knows of a cloud: one `CloudAdapter` object per cloud.

An adapter distribution registers a class under the `cloudguard.adapters`
entry-point group; the registry (cloudguard.cloud.adapter_registry) instantiates it
with no arguments, once, and asks it everything cloud-specific: how to sweep
and how to reap, how to read its CLI's JSON export, which power states bill,
what reaping a kind of resource is called there, whether tag names and ids
compare case-insensitively, which credential names it accepts, which options
of its own it takes, and how to show where a resource lives. A new cloud is
one package, no core edit (tests/toycloud proves it). Stdlib only; no cloud
is named here.

Callers never hold an adapter: they hold a `Cloud` (cloudguard.cloud.cloud),
which answers for a member an adapter lacks with the strictest rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from cloudguard.cloud.exports import ExportParser
    from cloudguard.cloud.kinds import Billing
    from cloudguard.cloud.options import Option
    from cloudguard.cloud.pricing import PriceList, PriceQuery
    from cloudguard.cloud.reaping import Reaper
    from cloudguard.cloud.records import Resource, SweepRequest, SweepResult


class CloudAdapter(Protocol):
    """One cloud, registered under the `cloudguard.adapters` entry-point group."""

    name: str  # the provider name: `--provider NAME`, `Resource.provider`

    # Live sides: the audit's sweep and `reap apply`'s reader/actor. Both use the
    # request's credential, endpoint and CA bundle, and nothing ambient besides.
    def sweep(self, request: SweepRequest) -> SweepResult: ...

    def reaper(self, request: SweepRequest) -> Reaper: ...

    # The --credential names it accepts (anything else is a usage error before any
    # sweep); None: it takes free-form names (AWS profiles) and checks them itself.
    credential_names: tuple[str, ...] | None

    # Options of its own (`--engine`, `--assume-role`): flags of the commands that show
    # them and keys of cloudguard.toml's tables, delivered in `SweepRequest.settings`.
    options: tuple[Option, ...]

    def check_options(self, values: Mapping[str, Any]) -> None:
        """Refuse values of its options that do not go together (raise OptionValueError,
        naming the flag to blame): a usage error (2) before anything is read."""
        ...

    # Offline inventories: the parsers of its CLI's JSON.
    export_parsers: tuple[ExportParser, ...]

    # Pricing. A power state not listed does not bill compute; `power_notes` says why a
    # billable state bills when the plain "compute bills" would mislead.
    billable_power_states: frozenset[str]
    power_notes: Mapping[str, str]
    # Hourly list prices by size for a cloud the bundled table does not price (same
    # currency and basis as the table); the bundled table wins for a cloud it lists.
    hourly_prices: Mapping[str, float]

    # Kind (a shared name such as "disk", or the cloud's type) -> whether it bills while idle
    # and when. A VM bills by its power state (above); a kind missing here is billed
    # unknown, never zero.
    kind_billing: Mapping[str, Billing]

    def price_query(self, resource: Resource) -> PriceQuery | None:
        """Which price of the cloud's own list `resource` needs (None: none known)."""
        ...

    def price_list(self, request: SweepRequest) -> PriceList | None:
        """Its price list as `request` may reach it, or None (none; or the request's endpoint
        is a fake with no price endpoint given: a test never reaches the real list)."""
        ...

    def price_key(self, size: str) -> str:
        """`size` as the price table spells it (Azure sizes come in any case)."""
        ...

    # Reaping: kind -> the operator's request (deallocate, delete) -> the cloud's verb.
    # A kind or request missing here is never acted on.
    reap_actions: Mapping[str, Mapping[str, str]]
    # What a request means for any kind `reap_actions` does not list (empty: never acted on).
    any_kind_actions: Mapping[str, str]

    def delete_command(self, resource: Resource) -> str | None:
        """The exact CLI command a person would run to delete a resource cloudguard does not
        reap (shown in the plan's `not_planned`); None: none known."""
        ...

    # True when a resource id is never given to another resource (the id is the identity).
    ids_never_reused: bool

    # Names: whether tag names and resource ids compare case-insensitively.
    case_insensitive_names: bool
    # Optional, `tag_name(name) -> str`: how a configured tag name (`--task-tag`,
    # `--leaked-by KEY=...`) is spelled on this cloud, where its tags cannot hold every
    # name (a GCP label key: `fleet.task` is the label `fleet_task`). Absent: as given.

    def scope_of(self, resource: Resource) -> str:
        """Where it lives, in one short cell (an Azure resource group, an AWS account)."""
        ...

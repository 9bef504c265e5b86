"""`Cloud`: one adapter as the core uses it, with one error policy for everything it asks.

The registry (cloudguard.cloud.adapter_registry) makes one `Cloud` per provider name,
loading its adapter once. Callers hold the `Cloud`, never the adapter, and
whatever goes wrong has one answer:

- a provider with no adapter installed, or one whose adapter cannot load, is
  *unavailable*: its sweep is a `SourceFailure` and its reaper is
  `ReaperUnavailable`, each naming why; its credential is not checked here
  (the sweep says why it did not run);
- a rule the adapter does not state gets the strictest answer: exact tag
  names, nothing known to bill, billing of a kind unknown (never zero), no
  reap action, ids that may be reused, no export parser, no options of its own;
- a sweep that raises or returns something else than a `SweepResult` is a
  `SourceFailure` (the audit did not run, 75), never an empty sweep.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from cloudguard.cloud.kinds import HOLDS_DATA, Billing, unknown_billing
from cloudguard.cloud.reaping import DESTRUCTIVE, ReaperError, ReaperUnavailable
from cloudguard.cloud.records import (
    Resource,
    SourceFailure,
    SweepRequest,
    SweepResult,
    folded_tag,
)

if TYPE_CHECKING:
    from cloudguard.cloud.exports import ExportParser
    from cloudguard.cloud.options import Option
    from cloudguard.cloud.pricing import PriceList, PriceQuery
    from cloudguard.cloud.reaping import Reaper

# Verbs that are destructive on every cloud, so an adapter that is missing now cannot make
# a planned delete look reversible.
_DESTRUCTIVE_VERBS = frozenset({"delete", "terminate"})


class UnknownCredentialError(ValueError):
    """A --credential name the adapter does not have: a usage error (2), before any sweep."""


class Cloud:
    """One provider: its adapter's rules (read once) and its live sides, failing closed."""

    def __init__(self, name: str, adapter: Any | None, unavailable: str | None = None) -> None:
        """`adapter`: the loaded `CloudAdapter`, or None with `unavailable` saying why."""
        self.name = name
        self.adapter = adapter
        self.unavailable = unavailable if adapter is None else None
        self.case_insensitive_names = bool(_member(adapter, "case_insensitive_names", False))
        # `id_key` as one C function (casefolded, or the id as it is): a call per resource.
        self.id_key_of: Callable[[str], str] = str.casefold if self.case_insensitive_names else str
        self.ids_never_reused = bool(_member(adapter, "ids_never_reused", False))
        self.billable_power_states = frozenset(_member(adapter, "billable_power_states", ()))
        self.power_notes: Mapping[str, str] = _member(adapter, "power_notes", _EMPTY)
        self.hourly_prices: Mapping[str, float] = _member(adapter, "hourly_prices", _EMPTY)
        self.kind_billing: Mapping[str, Billing] = _member(adapter, "kind_billing", _EMPTY)
        self.reap_actions: Mapping[str, Mapping[str, str]] = _member(
            adapter, "reap_actions", _EMPTY
        )
        # What a request means for a kind `reap_actions` does not list (Azure deletes any
        # resource by id); empty: such a kind is never acted on.
        self.any_kind_actions: Mapping[str, str] = _member(adapter, "any_kind_actions", _EMPTY)
        # Kinds whose delete destroys data: the shared ones, and the cloud's own type names.
        self.data_kinds = HOLDS_DATA | frozenset(_member(adapter, "data_kinds", ()))
        self.export_parsers: tuple[ExportParser, ...] = tuple(
            _member(adapter, "export_parsers", ())
        )
        self.options: tuple[Option, ...] = tuple(_member(adapter, "options", ()))
        self.credential_names: tuple[str, ...] | None = _member(adapter, "credential_names", None)
        # The lookup every tag read of every resource makes: one function, no branch.
        self.tag: Callable[[Mapping[str, str], str], str | None] = (
            folded_tag if self.case_insensitive_names else _exact_tag
        )
        spelled = _member(adapter, "tag_name", None)
        if spelled is not None:  # a configured name read as the cloud spells it
            lookup = self.tag
            self.tag = lambda tags, name: lookup(tags, spelled(name))

    # -- rules ---------------------------------------------------------------------------

    def id_key(self, resource_id: str) -> str:
        """A resource id as it compares (ARM ids echo the creator's case; EC2's are exact)."""
        return self.id_key_of(resource_id)

    def price_key(self, size: str) -> str:
        price_key = getattr(self.adapter, "price_key", None)
        return str(price_key(size)) if price_key is not None else size

    def billing(self, kind: str) -> Billing:
        """Whether `kind` bills while idle, and when; unknown when the adapter does not say."""
        return self.kind_billing.get(kind) or unknown_billing(kind)

    def price_query(self, resource: Resource) -> PriceQuery | None:
        """Which price of the cloud's own list `resource` needs; None: none known."""
        query = getattr(self.adapter, "price_query", None)
        return query(resource) if query is not None else None

    def price_list(self, request: SweepRequest) -> PriceList | None:
        """The cloud's price list as `request` may reach it; None: it has none, or it may
        not be reached from here (a faked endpoint with no price endpoint of its own)."""
        make = getattr(self.adapter, "price_list", None)
        return make(request) if make is not None else None

    def scope_of(self, resource: Resource) -> str:
        """Where it lives, in one short cell; the account when the adapter does not say."""
        scope_of = getattr(self.adapter, "scope_of", None)
        return str(scope_of(resource)) if scope_of is not None else resource.account

    def action_for(self, kind: str, requested: str) -> str | None:
        """The cloud's verb for `requested` (deallocate, delete) on this kind of resource;
        None if there is none (a kind it does not reap, or no adapter)."""
        return self._verbs(kind).get(requested)

    def actions(self, kind: str) -> frozenset[str]:
        """Every verb the cloud may perform on this kind of resource."""
        return frozenset(self._verbs(kind).values())

    def _verbs(self, kind: str) -> Mapping[str, str]:
        return self.reap_actions.get(kind) or self.any_kind_actions

    def delete_command(self, resource: Resource) -> str | None:
        """The CLI command a person would run to delete what cloudguard does not reap."""
        command = getattr(self.adapter, "delete_command", None)
        found = command(resource) if command is not None else None
        return str(found) if found else None  # an adapter's None is no command, never "None"

    def holds_data(self, kind: str) -> bool:
        """Deleting a `kind` destroys data (a disk, a bucket, a database, ...)."""
        return kind in self.data_kinds

    def is_destructive(self, kind: str, action: str) -> bool:
        """`action` is what `delete` means there (Azure delete, EC2 terminate): never undone."""
        return action == self.action_for(kind, DESTRUCTIVE) or action in _DESTRUCTIVE_VERBS

    # -- what an operator names --------------------------------------------------------

    def check_credential(self, credential: str | None) -> None:
        """Refuse a credential name the adapter declares it does not know (a usage error).

        An adapter that takes free-form names (AWS profiles) declares none, and an
        unavailable one is not checked here: its sweep says why it did not run.
        """
        known = self.credential_names
        if credential is None or known is None:
            return
        if credential.strip().lower() not in known:
            raise UnknownCredentialError(
                f"unknown credential {credential!r} for provider {self.name}; "
                f"choose one of: {', '.join(known)}"
            )

    def check_options(self, values: Mapping[str, Any]) -> None:
        """The adapter's own check of its options' values (OptionValueError: usage, 2)."""
        check = getattr(self.adapter, "check_options", None)
        if check is not None:
            check(values)

    # -- live sides ------------------------------------------------------------------------

    def sweep(self, request: SweepRequest) -> SweepResult:
        """Its sweep; whatever goes wrong is a `SourceFailure` naming this provider."""
        source = f"provider {self.name}"
        if self.adapter is None:
            return _failed(source, self.unavailable or "not installed")
        try:
            result = self.adapter.sweep(request)
        except Exception as exc:  # fail closed: a crashed sweep is "did not run"
            return _failed(source, f"sweep failed: {exc!r}")
        if not isinstance(result, SweepResult):
            return _failed(source, f"sweep returned {type(result).__name__}, not a SweepResult")
        return result

    def reaper(self, request: SweepRequest) -> Reaper:
        """Its live side of reaping, with the request's identity and endpoint; raises
        `ReaperUnavailable` naming why none can be had (nothing is acted on: 75)."""
        source = f"provider {self.name}"
        if self.adapter is None:
            raise ReaperUnavailable(source, self.unavailable or "not installed")
        if not callable(getattr(type(self.adapter), "reaper", None)):
            # Not the whole CloudAdapter protocol (a sweep-only plugin): never guess how to act.
            raise ReaperUnavailable(source, f"{self.origin} cannot reap (no reaper())")
        try:
            reaper: Reaper = self.adapter.reaper(request)
        except ReaperError:
            raise
        except Exception as exc:
            raise ReaperUnavailable(source, f"cannot start its reaper: {exc!r}") from exc
        return reaper

    @property
    def origin(self) -> str:
        """Where its adapter comes from, `module:Class`, for messages."""
        kind = type(self.adapter)
        return f"{kind.__module__}:{kind.__qualname__}"


_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _member(adapter: Any | None, name: str, strictest: Any) -> Any:
    return strictest if adapter is None else getattr(adapter, name, strictest)


def _exact_tag(tags: Mapping[str, str], name: str) -> str | None:
    return tags.get(name)


def _failed(source: str, reason: str) -> SweepResult:
    return SweepResult(resources=(), failures=(SourceFailure(source, reason),))

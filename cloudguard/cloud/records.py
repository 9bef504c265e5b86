"""The records a sweep yields and the request it is given. Stdlib only; no cloud named.

Adapters (Azure, AWS, ...) and the offline export parsers all produce
`Resource` records, so the auditor never knows where a resource came from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any, NamedTuple

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


_NO_TAGS: Mapping[str, str] = MappingProxyType({})  # a resource's default: shared, so read-only


class Resource(NamedTuple):
    """One cloud resource, normalised across providers.

    A named tuple: an audit makes one per resource of the fleet (100,000 and
    more), made in C in a third of a frozen dataclass's time, and each costs its
    fields and no per-instance dict. Changed copies: `resource._replace(...)`.
    """

    provider: str  # the adapter's name (cloudguard.adapters entry point): "azure", "aws", ...
    account: str  # the subscription / account id ("" when unknown)
    region: str
    group: str  # a grouping inside the account (Azure resource group), or ""
    id: str  # the cloud's id: ARM id / instance id / volume id
    name: str
    kind: str  # cloudguard.cloud.kinds: "vm", "disk", "public-ip", ... or the cloud's type name
    size: str  # VM size / instance type / disk SKU ("" when unknown)
    power_state: str  # one of POWER_STATES
    created: datetime | None  # timezone-aware UTC, or None when unknown
    tags: Mapping[str, str] = _NO_TAGS
    source: str = ""  # where the record came from: a file path, "azure:<sub>", ...
    # The provider's unique id of this very resource (Azure vmId / disk uniqueId), which a
    # resource deleted and re-created under the same name does not share; "" when unknown.
    uid: str = ""

    def tag(self, name: str, *, case_insensitive: bool | None = None) -> str | None:
        """The value of tag `name`, compared as its cloud compares tag names (the adapter's
        `case_insensitive_names`: Azure's are case-insensitive)."""
        if case_insensitive is None:
            case_insensitive = _names_case_insensitive(self.provider)
        return tag_value(self.tags, name, case_insensitive=case_insensitive)


def tag_value(tags: Mapping[str, str], name: str, *, case_insensitive: bool) -> str | None:
    """Tag `name` of `tags`, its name compared exactly or casefolded."""
    return folded_tag(tags, name) if case_insensitive else tags.get(name)


def folded_tag(tags: Mapping[str, str], name: str) -> str | None:
    """Tag `name` of `tags`, names compared casefolded (Azure's tag names)."""
    wanted = name.casefold()
    for key, value in tags.items():
        if key.casefold() == wanted:
            return value
    return None


# How a provider compares tag names is its adapter's to say, and adapters are loaded by
# the registry, which sits above these records: it answers for them once it is imported
# (`answer_name_case`), so this module imports nothing of it. Until then nothing is folded:
# exact names are the strict answer, as for a provider with no adapter installed.
def _exact(provider: str) -> bool:
    return False


_names_case_insensitive: Callable[[str], bool] = _exact


def answer_name_case(rule: Callable[[str], bool]) -> None:
    """Let `rule(provider)` say whether `Resource.tag` folds that provider's tag names."""
    global _names_case_insensitive
    _names_case_insensitive = rule


@dataclass(frozen=True)
class SourceFailure:
    """An inventory or evidence source that could not be read: the audit did not run."""

    source: str  # e.g. "azure subscription 0000-...", "controller home /srv/fm"
    reason: str  # human readable, names the cause (HTTP 403, file missing, ...)


@dataclass(frozen=True)
class SweepRequest:
    """What a live adapter is asked to sweep, or to reap with (options it does not use are
    ignored). `settings` are the adapter's own options (`CloudAdapter.options`), by name."""

    subscriptions: tuple[str, ...] = ()
    all_subscriptions: bool = False
    resource_groups: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    task_tag: str = "task-id"
    credential: str | None = None  # a specific credential to use, by name
    concurrency: int = 4
    retries: int = 10  # the retry budget: retries per request (throttling, 5xx, resets)
    endpoint: str | None = None  # management endpoint override (a local fake)
    kinds: tuple[str, ...] = ()  # the kinds to sweep (`--kind`); empty: every kind
    ca_bundle: str | None = None  # CA bundle for `endpoint`
    # `reap apply`: how long one item's reads may take, waits included (None: the sweep's).
    item_budget: timedelta | None = None
    settings: Mapping[str, Any] = field(default_factory=dict, hash=False)
    # Told as the sweep goes (cloudguard.cloud.progress.told): `progress(scope, what)`,
    # "reading" as a scope (a subscription, a region) begins, then what it read. None: untold.
    progress: Callable[[str, str], None] | None = field(
        default=None, hash=False, compare=False, repr=False
    )


@dataclass(frozen=True)
class SweepResult:
    resources: tuple[Resource, ...]
    failures: tuple[SourceFailure, ...] = ()

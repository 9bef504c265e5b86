"""Records, the `Reaper` interface, and the errors of reaping. Stdlib only.

A plan is made offline from an audit report; every item in it is re-read
live and re-verified before anything is done to it. The adapters implement
`Reaper`; the core never imports a cloud SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from cloudguard.audit.adapter_registry import cloud_adapter, names_case_insensitive
from cloudguard.audit.findings import LEAKED, ORPHAN
from cloudguard.audit.model import Resource

# Only these verdicts may be reaped. suspect (a record exists), pending (the
# controller may not have written it yet), unverified (nothing was checked) and
# ok are never reapable, whatever an operator asks for.
REAPABLE_VERDICTS = (ORPHAN, LEAKED)

# What the operator asks for on the command line.
REVERSIBLE = "deallocate"  # stop billing compute, keep the machine and its disks
DESTRUCTIVE = "delete"  # gone for good; must be asked for explicitly
REQUESTED_ACTIONS = (REVERSIBLE, DESTRUCTIVE)

# What that means for each provider and kind is the adapter's `reap_actions`: the cloud's
# own verb (Azure deallocate/delete, EC2 stop/terminate). A disk has no reversible action:
# it bills while it exists. Every verb for DESTRUCTIVE is destructive, whatever its name.


# A resource carrying any of these tags (any value) is never acted on. Matched
# case-insensitively on every provider: a false skip costs money, a false
# reap costs a machine.
PROTECTION_TAGS = ("cloudguard-protect", "do-not-reap")


def action_for(provider: str, kind: str, requested: str) -> str | None:
    """The provider's action for `requested` on this kind of resource; None if there is none
    (no adapter installed for it, a kind it does not reap)."""
    adapter = cloud_adapter(provider)
    if adapter is None:
        return None
    return adapter.reap_actions.get(kind, {}).get(requested)


def provider_actions(provider: str, kind: str) -> frozenset[str]:
    """Every verb the provider's adapter may perform on this kind of resource."""
    adapter = cloud_adapter(provider)
    if adapter is None:
        return frozenset()
    return frozenset(adapter.reap_actions.get(kind, {}).values())


def is_destructive(provider: str, kind: str, action: str) -> bool:
    """`action` is what `delete` means there (Azure delete, EC2 terminate): never undone."""
    return action == action_for(provider, kind, DESTRUCTIVE) or action in _DESTRUCTIVE_VERBS


# Verbs that are destructive on every cloud, so an adapter that is missing now cannot make
# a planned delete look reversible.
_DESTRUCTIVE_VERBS = frozenset({"delete", "terminate"})


def ids_never_reused(provider: str) -> bool:
    """The provider never gives a resource's id to another resource: the id is the identity."""
    adapter = cloud_adapter(provider)
    return adapter is not None and adapter.ids_never_reused


def tag_value(provider: str, tags: Mapping[str, str], name: str) -> str | None:
    """Tag `name` as the provider reads it (the adapter's `case_insensitive_names`:
    case-insensitive on Azure, exact on AWS and wherever no adapter says otherwise)."""
    if not names_case_insensitive(provider):
        return tags.get(name)
    wanted = name.casefold()
    return next((v for k, v in tags.items() if k.casefold() == wanted), None)


def protection_tag(tags: Mapping[str, str]) -> str | None:
    """The first protection tag name present (as spelled on the resource), or None."""
    protected = {t.casefold() for t in PROTECTION_TAGS}
    return next((k for k in tags if k.casefold() in protected), None)


@dataclass(frozen=True)
class PlanPolicy:
    """The audit's fleet vocabulary, carried in the plan for the reviewer only: apply uses
    its own (configuration and command line), never a plan's."""

    task_tag: str = "task-id"
    generation_tag: str = "repository-generation"
    leaked_by: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class PlanItem:
    """One resource the plan would act on, with what the audit saw of it."""

    provider: str
    account: str
    region: str
    group: str
    id: str
    name: str
    kind: str
    action: str  # the provider's verb: deallocate, stop, delete, terminate
    tags: Mapping[str, str]  # the snapshot: apply acts only if the live task/generation agree
    verdict: str
    reasons: tuple[str, ...]
    power_state: str
    audited_at: datetime
    leaked_by: tuple[tuple[str, str], ...] = ()  # the --leaked-by tags it carried (leaked only)
    # What the audit's controller check found: found | missing | not-checked. For the
    # reviewer only: apply reads the controller evidence itself, for every item.
    controller_record: str = "missing"
    # Who it was when reviewed: apply acts only on the very same resource. Azure ids are
    # names, so a VM deleted and re-created under its name has the planned id but a new
    # vmId (uid) and creation time; EC2 ids are never reused (the adapter's ids_never_reused).
    uid: str = ""
    created: datetime | None = None
    # Set on a dependent (what its parent's delete left behind, `--with-dependents`): the
    # item whose live read named it. A disk has no reviewed identity of its own; a NIC or
    # public IP carries as `uid` the resourceGuid its parent's read saw it with.
    dependent_of: str = ""


@dataclass(frozen=True)
class Live:
    """One resource as its provider answers for it now, with what reaping must know besides.

    `protections` names each protection the cloud or the operator put on it or on a scope
    above it (a tag on its resource group or subscription, an Azure management lock, EC2
    termination/stop protection): any of them is a skip. `attached_to` is, for a disk, what
    it is attached to now (None: nothing). `left_billing` names what deleting it would leave
    billing (data disks, NICs, volumes that outlive it).
    """

    resource: Resource
    protections: tuple[str, ...] = ()
    attached_to: str | None = None
    left_billing: tuple[str, ...] = ()
    # The ids of the disks among `left_billing`, which `--with-dependents` reaps too.
    dependent_disks: tuple[str, ...] = ()
    # Other dependents `--with-dependents` reaps, each with the identity it was seen with.
    dependents: tuple[Dependent, ...] = ()


@dataclass(frozen=True)
class Dependent:
    """One resource a delete leaves billing (a NIC, a public IP), named by its parent's live read.

    `uid` is its unique id (Azure resourceGuid) as that read saw it while it was still the
    parent's: the dependent is acted on only if its own live read shows the same one.
    """

    kind: str
    id: str
    uid: str


@dataclass(frozen=True)
class NotPlanned:
    """A reapable finding the plan leaves alone, and why (shown, never silently dropped)."""

    id: str
    name: str
    verdict: str
    why: str


@dataclass(frozen=True)
class Plan:
    created_at: datetime
    audit_generated_at: datetime
    audit_source: str
    requested_action: str  # REVERSIBLE or DESTRUCTIVE
    verdicts: tuple[str, ...]
    policy: PlanPolicy
    items: tuple[PlanItem, ...]
    not_planned: tuple[NotPlanned, ...] = field(default=())
    # Reviewed as part of the plan: after each VM's delete, the disks it left billing are
    # items of their own, each re-derived live like any other.
    with_dependents: bool = False


class Reaper(Protocol):
    """One provider's live side of reaping. Adapters return one from `adapter.reaper(request)`.

    `current` reads one resource now, with its protections (None: it no longer
    exists) and raises `ReadError` when it cannot tell (a missing subscription or
    resource group is "cannot tell", never "gone"); `act` performs one action and returns
    only when the provider has accepted (Azure: finished) it, raising
    `ActionError` otherwise. Neither may fall back to some other identity or
    endpoint than the request named.
    """

    def current(self, item: PlanItem) -> Live | None: ...

    def act(self, item: PlanItem, action: str) -> None: ...

    def close(self) -> None: ...


class ReaperError(Exception):
    """Something a reaper could not do; `source` names what, `reason` why."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.reason = reason


class ReaperUnavailable(ReaperError):
    """The reaper cannot be used at all (not installed, no credential): nothing is done (75)."""


class ReadError(ReaperError):
    """One resource's current state could not be read: it is not acted on (75)."""


class ActionError(ReaperError):
    """The action was attempted and did not succeed, or its outcome is unknown (1)."""

"""What reaping asks of a cloud: read one resource live, act on it, and the errors of both.

A plan is made offline from an audit report; every item in it is re-read
live and re-verified before anything is done to it. An adapter returns a
`Reaper` from `CloudAdapter.reaper(request)`; the core never imports a cloud
SDK. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from cloudguard.cloud.records import Resource

# What the operator asks for on the command line. What that means for each kind of
# resource is the adapter's `reap_actions`: the cloud's own verb (Azure deallocate/delete,
# EC2 stop/terminate). A disk has no reversible action: it bills while it exists. Every
# verb for DESTRUCTIVE is destructive, whatever its name.
REVERSIBLE = "deallocate"  # stop billing compute, keep the machine and its disks
DESTRUCTIVE = "delete"  # gone for good; must be asked for explicitly
REQUESTED_ACTIONS = (REVERSIBLE, DESTRUCTIVE)
# The skip code of a resource group that holds something the plan did not review (deleting
# it would delete that too), whether apply's read or the last look before the DELETE saw it.
GROUP_CHANGED = "group-changed"

# A resource carrying any of these tags (any value), or whose resource group or account
# carries one, is never acted on. Matched case-insensitively on every cloud: a false skip
# costs money, a false reap costs a machine.
PROTECTION_TAGS = ("cloudguard-protect", "do-not-reap")


def protection_tag(tags: Mapping[str, str]) -> str | None:
    """The first protection tag name present (as spelled on the resource), or None."""
    protected = {t.casefold() for t in PROTECTION_TAGS}
    return next((k for k in tags if k.casefold() in protected), None)


class Target(Protocol):
    """The resource a reaper is asked about: one item of a reviewed plan."""

    @property
    def provider(self) -> str: ...
    @property
    def account(self) -> str: ...
    @property
    def region(self) -> str: ...
    @property
    def group(self) -> str: ...
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def action(self) -> str: ...  # the cloud's verb, one of its `reap_actions`


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
    # A resource group: everything in it now, each read as its own item would be (its
    # identity and protections); None for anything else. A group is deleted only when each
    # of these is one the plan reviewed, and reapable now.
    members: tuple[Live, ...] | None = None


class Reaper(Protocol):
    """One provider's live side of reaping. Adapters return one from `adapter.reaper(request)`.

    `current` reads one resource now, with its protections (None: it no longer
    exists) and raises `ReadError` when it cannot tell (a missing subscription or
    resource group is "cannot tell", never "gone"); `act` performs one action and returns
    only when the provider has accepted (Azure: finished) it, raising
    `ActionError` otherwise. An action that needs a last look right before it is sent
    (an Azure resource group: its listing) raises `ReadError` when that look cannot be
    read and `Withheld` when it finds the item changed since `current`: nothing was sent.
    Neither may fall back to some other identity or endpoint than the request named.
    """

    def current(self, item: Target) -> Live | None: ...

    def act(self, item: Target, action: str) -> None: ...

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


class Withheld(ReaperError):
    """The last look right before the action found the item changed since it was read (a
    resource group holding something its read did not see): nothing was sent (a skip,
    `code`)."""

    def __init__(self, source: str, reason: str, code: str = GROUP_CHANGED) -> None:
        super().__init__(source, reason)
        self.code = code


class ActionError(ReaperError):
    """The action was attempted and did not succeed, or its outcome is unknown (1)."""


class ActionUnfinished(ActionError):
    """The action was sent, and the item's budget ended before the cloud said it finished:
    its outcome is unknown, and the run did not complete (75)."""

"""The Azure side of `cloudguard reap apply`: read one resource live, act on it.

Reads with ARM GET, one resource at a time (`virtual_machines.get(...,
expand="instanceView")` for tags and power state in one call, `disks.get`),
never from a listing or Resource Graph, which can lag ARM; then what
protects it from above: its resource group's and subscription's tags, and
the management locks (Microsoft.Authorization/locks, read as JSON) at its
own, its group's and its subscription's scope. A 404 is "gone" only
when ARM says the resource itself is not found (`ResourceNotFound`); a
missing subscription or group is "cannot tell". Acts with the long-running
operations (`begin_deallocate`, `begin_delete`) and waits for them to
finish: "done" means ARM said Succeeded. A resource group is listed once more as the
last request before its DELETE, which is sent only if the group holds exactly what its
members' read saw (`_last_look`). An action is sent with
`retry_total=0`: a deallocate or delete whose answer was lost is reported
failed (someone looks), never sent again by azure-core's retry policy. The
credential and client options are the sweep's (cloudguard_azure.session: `--credential`,
`--management-endpoint`, `--ca-bundle`), so the same loopback and credential rules hold. SDK imports
live inside the functions.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from cloudguard.cloud import kinds
from cloudguard.cloud.exports import parse_time
from cloudguard.cloud.reaping import (
    ActionError,
    ActionUnfinished,
    Dependent,
    Live,
    ReadError,
    ReaperError,
    ReaperUnavailable,
    Target,
    Withheld,
    protection_tag,
)
from cloudguard.cloud.records import SweepRequest
from cloudguard_azure import generic, network_dependents, normalise, paging, session
from cloudguard_azure import kinds as azure_kinds
from cloudguard_azure.budget import Clock, TimeBudgetExhausted
from cloudguard_azure.session import arm_code as _arm_code
from cloudguard_azure.session import describe_error

_ID = re.compile(
    r"^/subscriptions/(?P<sub>[^/]+)/resourceGroups/(?P<group>[^/]+)"
    r"(?:/providers/(?P<namespace>[^/]+)/(?P<path>.+))?$",
    re.IGNORECASE,
)
# The kinds with readers of their own here (Compute, Network); any other is read by id.
_OWN_READERS = frozenset({kinds.VM, kinds.DISK, *network_dependents.NETWORK_KINDS})
# Deallocating a VM takes minutes; past this the outcome is unknown (a failure to look at).
DEFAULT_LRO_TIMEOUT = 1800.0
# The only 404 that means "it is gone"; SubscriptionNotFound, ResourceGroupNotFound and
# the rest mean we cannot tell.
_GONE_CODES = frozenset({"resourcenotfound"})
# A group item is gone when its group is (a member's missing group is "cannot tell").
_GROUP_GONE_CODES = frozenset({"resourcegroupnotfound"})
_LOCK_LEVELS = frozenset({"cannotdelete", "readonly"})
# Read as JSON through the compute client's pipeline (cloudguard_azure.paging): the
# subscriptions and locks clients left azure-mgmt-resource in its 26.0 for packages that
# overwrite an older azure-mgmt-resource's files.
_SUBSCRIPTION_API = "api-version=2022-12-01"  # Subscriptions - Get: its tags
_LOCKS = "/providers/Microsoft.Authorization/locks?api-version=2020-05-01"  # at a scope


class AzureReaper:
    """One reaper per `reap apply` run; one compute client per subscription, closed at the end."""

    def __init__(
        self,
        request: SweepRequest,
        client_options: Callable[[], dict[str, Any]],
        clock: Clock,
        *,
        credential: Any | None = None,
        lro_timeout: float = DEFAULT_LRO_TIMEOUT,
    ) -> None:
        """`client_options()`: one client's options, its retry policy waiting on `clock`,
        which each item restarts (`--item-budget`: past it, the item is unreadable)."""
        self._options = client_options
        self._clock = clock
        self._lro_timeout = lro_timeout
        self._clients: dict[tuple[str, str], Any] = {}
        self._versions: dict[tuple[str, str], str] = {}  # (subscription, ARM type) -> api-version
        # A group's listing as its members were read (by the group's casefolded id): its DELETE
        # is sent only if the group's last listing, right before it, is the same.
        self._read_groups: dict[str, dict[str, _Mark]] = {}
        self._owned = credential is None
        if credential is None:
            # One token up front: a missing identity stops the run before any item.
            try:
                credential = session.open_credential(request)
            except session.SessionRefused as refused:
                raise ReaperUnavailable(refused.source, refused.reason) from refused
        self._credential = credential

    def current(self, item: Target) -> Live | None:
        self._clock.restart()  # the item's budget: a group's members are read within it
        return self._current(item)

    def _current(self, item: Target) -> Live | None:
        address = _address(item, ReadError)
        sub, group, name = address.sub, address.group, address.name
        if item.kind == kinds.RESOURCE_GROUP:
            return self._group_current(item, sub, group)
        if item.kind not in _OWN_READERS:
            return self._generic_current(item, address)
        if item.kind in network_dependents.NETWORK_KINDS:
            return self._network_current(item, sub, group, name)
        return self._compute_current(item, sub, group, name)

    def _compute_current(self, item: Target, sub: str, group: str, name: str) -> Live | None:
        from azure.core.exceptions import ResourceNotFoundError

        compute = self._client("compute", sub)
        source = f"azure {item.kind} {item.id}"
        nics: tuple[Dependent, ...] = ()
        # What protects it from above first, its own GET (its tags, its attachment) last: a
        # tag put on it after that GET is the only window left (issue 32). Protection that
        # cannot be read is told only once its GET says it is there (a gone one is gone).
        unreadable, protections, _ = self._before_its_own_read(
            item, sub, group, source, listing=False
        )

        def read() -> tuple[Any, Any, Any, Any, Any]:
            if item.kind == "vm":
                vm = compute.virtual_machines.get(group, name, expand="instanceView")
                return vm, normalise.vm_resource(vm, sub), None, _left_by(vm), _kept_disks(vm)
            disk = compute.disks.get(group, name)
            attached = None if normalise.is_unattached(disk) else _attachment(disk)
            return disk, normalise.disk_resource(disk, sub), attached, (), ()

        try:
            vm, resource, attached, left, disks = read()
            if item.kind == "vm" and item.action == "delete":
                # Who its kept NICs are now (resourceGuid), while they still name this VM;
                # then the VM once more, the last read.
                network = self._client("network", sub)
                nics = network_dependents.kept_nics(vm, network, item.id, source)
                vm, resource, attached, left, disks = read()
        except ResourceNotFoundError as exc:
            if _arm_code(exc) in _GONE_CODES:
                return None
            raise ReadError(source, describe_error(exc)) from exc
        except ReadError:
            raise
        except Exception as exc:  # 403, throttled past retries, unreadable: unknown state
            raise ReadError(source, describe_error(exc)) from exc
        if unreadable is not None:
            raise unreadable
        return Live(
            resource,
            protections=protections,
            attached_to=attached,
            left_billing=left,
            dependent_disks=disks,
            dependents=nics,
        )

    def _network_current(self, item: Target, sub: str, group: str, name: str) -> Live | None:
        """A NIC or public IP a deleted VM left: attached to what now, and its public IPs.

        What protects it and its creation time first, its own GET last (as a VM's): a tag
        put on it after that GET is the only window left (issue 32)."""
        source = f"azure {item.kind} {item.id}"
        network = self._client("network", sub)
        left: tuple[str, ...] = ()
        addresses: tuple[Dependent, ...] = ()
        # Microsoft.Network records no creation time; ARM does (its group's listing): a
        # planned NIC or public IP is bound to it. A dependent is bound to its parent's
        # read of its resourceGuid instead.
        bound_to_listing = not getattr(item, "dependent_of", "")
        uid: str | None = None
        # Bound to the listing's creation time, it is bound to its resourceGuid as read
        # before that listing too: a re-creation between the listing and its last GET.
        if bound_to_listing:
            uid = network_dependents.read_uid(network, item.kind, group, name, source)
            if uid is None:
                return None
        unreadable, protections, listed = self._before_its_own_read(
            item, sub, group, source, listing=bound_to_listing
        )
        if item.kind == "nic":
            nic = network_dependents.read_nic_last(network, group, name, sub, source)
            if nic is None:
                return None
            resource, attached, left, addresses = nic
        else:
            address = network_dependents.read_public_ip(network, group, name, sub, source)
            if address is None:
                return None
            resource, attached = address
        if unreadable is not None:
            raise unreadable
        if bound_to_listing:
            if resource.uid.casefold() != (uid or "").casefold():
                raise ReadError(
                    source,
                    f"re-created while it was read: resourceGuid {uid} before its group's "
                    f"listing, {resource.uid or 'none'} after: nothing was sent",
                )
            resource = resource._replace(created=parse_time(listed.get("createdTime")))
        return Live(
            resource,
            protections=protections,
            attached_to=attached,
            left_billing=left,
            dependents=addresses,
        )

    def _before_its_own_read(
        self, item: Target, sub: str, group: str, source: str, *, listing: bool
    ) -> tuple[ReadError | None, tuple[str, ...], dict[str, Any]]:
        """Its protections and (when asked) its group's listing of it, read before its own
        GET. What cannot be read is told only once that GET says it is there (a gone one
        is gone): (the first read error, the protections, its entry in the listing)."""
        try:
            protected = self._protections(sub, group, item.id, source)
            listed = self._listed(sub, group).get(item.id.casefold(), {}) if listing else {}
        except ReadError as exc:
            return exc, (), {}
        return None, protected, listed

    def _listed_again(
        self, item: Target, sub: str, group: str, source: str, before: dict[str, Any]
    ) -> None:
        """Its group's listing once more, after its own GET, the last read before its action:
        it must show the resource as the first listing did (type, creation time, tags), else
        it changed while it was read (re-created under its name between the first listing and
        the GET, or tagged after the GET) and is not acted on. For a kind read by id, whose
        GET carries no unique id (a NIC or public IP is bound to its resourceGuid instead).
        The window left is this listing's answer and the action (as a group's last look)."""
        listed = self._listed_once_more(sub, group, source, "its listing after its own read")
        now = listed.get(item.id.casefold(), {})
        if _mark(now) != _mark(before):
            raise ReadError(
                source,
                "it changed while it was read (its group's listing before and after its own "
                "GET differ: re-created, re-tagged or retyped): nothing was sent",
            )

    def _generic_current(self, item: Target, address: _Address) -> Live | None:
        """Any other kind, by id: GET with its provider's api-version, and the creation time
        ARM records for it (its group's listing, `$expand=createdTime`); its protections and
        the listing before the GET, which is the last read (issue 32)."""
        source = f"azure {item.kind} {item.id}"
        resources = self._client("resources", address.sub)
        unreadable, protections, created = self._before_its_own_read(
            item, address.sub, address.group, source, listing=True
        )
        try:
            version = self._api_version(address.sub, address.arm_type)
            found = _gone_is_none(
                lambda: resources.resources.get_by_id(item.id, api_version=version)
            )
        except ReadError:
            raise
        except Exception as exc:  # 403, throttled past retries: unknown state
            raise ReadError(source, describe_error(exc)) from exc
        if found is None:
            return None
        if unreadable is not None:
            raise unreadable
        self._listed_again(item, address.sub, address.group, source, created)
        body = {**found.as_dict(), "createdTime": created.get("createdTime")}
        resource = generic.resource_from_arm(body, f"azure:{address.sub}")
        managed_by = body.get("managedBy")
        return Live(
            resource,
            protections=protections,
            attached_to=f"managed by {managed_by}" if managed_by else None,
        )

    def _group_current(self, item: Target, sub: str, group: str) -> Live | None:
        """A resource group and everything it holds now, each member read as an item of
        its own (its identity, tags, protections): a group is what it holds. A member its
        listing shows and its own read does not find (ARM answers 404 for a moment after a
        resource is created), or the reverse, cannot be read as a reviewed one: the group is
        unreadable. A member of the plan is gone only when neither shows it (and the last
        listing, before the DELETE, must not show it either: `_last_look`)."""
        source = f"azure resource group {item.id}"
        self._read_groups.pop(item.id.casefold(), None)
        resources = self._client("resources", sub)
        try:
            found = _gone_is_none(
                lambda: resources.resource_groups.get(group), codes=_GROUP_GONE_CODES
            )
            if found is None:
                return None
            listed = self._listed(sub, group)
        except Exception as exc:  # 403, throttled past retries: unknown state
            raise ReadError(source, describe_error(exc)) from exc
        resource = generic.group_from_arm(found.as_dict(), f"azure:{sub}")
        members: list[Live] = []
        for member_id, entry in listed.items():
            member = _Member(
                "azure", sub, str(entry.get("location") or ""), group, str(entry["id"]),
                str(entry.get("name") or member_id.rsplit("/", 1)[-1]),
                azure_kinds.kind_of(str(entry.get("type") or "")),
            )  # fmt: skip
            read = self._current(member)
            if read is None:
                raise ReadError(
                    f"azure {member.kind} {member.id}",
                    f"its group {group} lists it, but its own read says not found (ARM "
                    "answers so for a moment after a resource is created): it cannot be read "
                    "as a member the plan reviewed, so the group is not deleted",
                )
            members.append(read)
        inside = f"/subscriptions/{sub}/resourceGroups/{group}/".casefold()
        for planned in getattr(item, "members", None) or ():
            key = str(planned.id).casefold()
            if key in listed or not key.startswith(inside):
                continue  # read above; or not this group's (an edited plan): not what it holds
            if self._current(planned) is not None:
                raise ReadError(
                    f"azure {planned.kind} {planned.id}",
                    f"its own read finds it, but its group {group} does not list it: "
                    "the group is not deleted while the two disagree",
                )
        self._read_groups[item.id.casefold()] = {k: _mark(e) for k, e in listed.items()}
        return Live(
            resource,
            protections=self._protections(sub, group, resource.id, source),
            members=tuple(members),
        )

    def _last_look(self, item: Target, group: str, sub: str) -> None:
        """The group's listing once more, the last request before its DELETE: the group must
        hold exactly what it held when its members were read (the same ids, each with the
        same type, creation time and tags), else nothing is sent (`Withheld`). ARM has no
        "delete if it holds exactly": what is created between this answer and the DELETE
        goes with the group (the window docs/reap.md measures)."""
        source = f"azure resource group {item.id}"
        seen = self._read_groups.pop(item.id.casefold(), None)
        if seen is None:
            raise Withheld(source, "its members were not read in this apply: nothing was sent")
        now = self._listed_once_more(sub, group, source, "its last listing before the DELETE")
        for key, entry in now.items():
            what = f"{azure_kinds.kind_of(str(entry.get('type') or ''))} {entry.get('id')}"
            if key not in seen:
                raise Withheld(
                    source,
                    f"holds {what} now, which was not there when its members were read "
                    "(created since): deleting the group would delete it; nothing was sent",
                )
            if _mark(entry) != seen[key]:
                raise Withheld(
                    source,
                    f"its {what} changed since it was read (its type, creation time or "
                    "tags): nothing was sent",
                )
        for key in seen.keys() - now.keys():
            raise Withheld(
                source,
                f"its member {key} is no longer listed since it was read: the group is left "
                "for an apply that reads it again; nothing was sent",
            )

    def _listed_once_more(
        self, sub: str, group: str, source: str, look: str
    ) -> dict[str, dict[str, Any]]:
        """A group's listing read again to compare with an earlier one (`_listed_again` for
        one resource, `_last_look` for a group whole): one that cannot be read (403, 404,
        throttled past retries) is unknown state, a ReadError naming the `look`, nothing sent."""
        try:
            return self._listed(sub, group)
        except Exception as exc:
            raise ReadError(source, f"{look}: {describe_error(exc)}") from exc

    def _listed(self, sub: str, group: str) -> dict[str, dict[str, Any]]:
        """What `group` holds, by casefolded id, with ARM's creation time of each. A listing
        that names one resource twice was paged while it changed (ARM's pages are offsets: a
        resource created before the page boundary pushes one already listed into the next
        page, and is itself never listed): it is no account of what the group holds."""
        resources = self._client("resources", sub)
        found: dict[str, dict[str, Any]] = {}
        for r in resources.resources.list_by_resource_group(group, expand="createdTime"):
            key = str(r.id).casefold()
            if key in found:
                raise ReadError(
                    f"azure resource group {group}",
                    f"its listing named {r.id} twice: its pages changed while they were read",
                )
            found[key] = r.as_dict()
        return found

    def _api_version(self, sub: str, arm_type: str) -> str:
        """The newest stable api-version the type's provider lists (a preview only when it
        lists nothing else): a delete by id must name one its provider takes."""
        namespace, _, resource_type = arm_type.partition("/")
        key = (sub.casefold(), arm_type.casefold())
        if key not in self._versions:
            provider = self._client("resources", sub).providers.get(namespace)
            versions = next(
                (
                    list(t.api_versions or ())
                    for t in provider.resource_types or ()
                    if str(t.resource_type).casefold() == resource_type.casefold()
                ),
                [],
            )
            stable = [v for v in versions if "preview" not in v]
            if not (stable or versions):
                raise ReadError(
                    f"azure {arm_type}", f"provider {namespace} lists no api-version for it"
                )
            self._versions[key] = max(stable or versions)
        return self._versions[key]

    def _protections(self, sub: str, group: str, resource_id: str, source: str) -> tuple[str, ...]:
        """Protection tags on its group and subscription, and locks at any of the three scopes."""
        found: list[str] = []
        sub_scope = f"/subscriptions/{sub}"
        group_scope = f"{sub_scope}/resourceGroups/{group}"
        try:
            group_tags = self._client("resources", sub).resource_groups.get(group).tags or {}
            if (tag := protection_tag(group_tags)) is not None:
                found.append(f"its resource group {group} carries protection tag {tag!r}")
            arm = self._client("compute", sub)  # its pipeline, for reads as JSON
            subscription = paging.read_object(arm, f"{sub_scope}?{_SUBSCRIPTION_API}")
            if (tag := protection_tag(subscription.get("tags") or {})) is not None:
                found.append(f"its subscription {sub} carries protection tag {tag!r}")
            seen: set[str] = set()
            for scope in (sub_scope, group_scope, resource_id):
                for lock in paging.every_item(arm, f"{scope}{_LOCKS}"):
                    lock_id, name = str(lock.get("id") or ""), str(lock.get("name") or "")
                    lock_scope = lock_id.split("/providers/Microsoft.Authorization/locks/")[0]
                    level = str((lock.get("properties") or {}).get("level") or "")
                    if lock_id.casefold() in seen or level.casefold() not in _LOCK_LEVELS:
                        continue
                    if _covers(lock_scope, resource_id):
                        seen.add(lock_id.casefold())
                        found.append(f"management lock {name!r} ({level}) on {lock_scope}")
        except Exception as exc:  # protection unknown: not "unprotected"
            raise ReadError(source, f"cannot read its protection: {describe_error(exc)}") from exc
        return tuple(found)

    def act(self, item: Target, action: str) -> None:
        """Within the item's budget (the clock `current` started): the wait for the
        operation to finish is part of it, so an item ends by its deadline."""
        address = _address(item, ActionError)
        source = f"azure {item.kind} {item.id}"
        try:
            # retry_total=0: never re-sent by the retry policy (polling may retry: it reads).
            poller = self._send(item, action, address)
            if poller is None:
                raise ActionError(source, f"no action {action!r} for a {item.kind}")
            wait = min(self._lro_timeout, self._clock.remaining())
            poller.result(timeout=wait)
            if not poller.done():
                raise ActionUnfinished(
                    source,
                    f"{action} sent, but not seen to finish within {wait:.0f} s (the item's "
                    f"budget, --item-budget, or {self._lro_timeout:.0f} s at most): outcome "
                    "unknown",
                )
        except ReaperError:  # failed, or (a group's last look) not sent at all
            raise
        except TimeBudgetExhausted as exc:  # a poll the budget did not leave time for
            raise ActionUnfinished(source, f"{action} sent, not seen to finish: {exc}") from exc
        except Exception as exc:
            raise ActionError(source, f"{action} failed: {describe_error(exc)}") from exc

    def _send(self, item: Target, action: str, address: _Address) -> Any:
        """The action's long-running operation, sent once (retry_total=0); None: no such
        action for the item's kind."""
        sub, group, name = address.sub, address.group, address.name
        if action != "delete" and not (item.kind == kinds.VM and action == "deallocate"):
            return None
        if item.kind == kinds.RESOURCE_GROUP:
            self._last_look(item, group, sub)  # nothing is sent between it and the DELETE
            return self._client("resources", sub).resource_groups.begin_delete(group, retry_total=0)
        if item.kind not in _OWN_READERS:
            version = self._api_version(sub, address.arm_type)
            resources = self._client("resources", sub).resources
            return resources.begin_delete_by_id(item.id, api_version=version, retry_total=0)
        if item.kind in network_dependents.NETWORK_KINDS:
            return network_dependents.begin_delete(
                self._client("network", sub), item.kind, group, name
            )
        compute = self._client("compute", sub)
        if item.kind == kinds.VM and action == "deallocate":
            return compute.virtual_machines.begin_deallocate(group, name, retry_total=0)
        if item.kind == kinds.VM:
            return compute.virtual_machines.begin_delete(group, name, retry_total=0)
        return compute.disks.begin_delete(group, name, retry_total=0)

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()
        if self._owned:
            session.close_credential(self._credential)

    def _client(self, kind: str, subscription: str) -> Any:
        key = (kind, subscription.casefold())
        if key not in self._clients:
            options = {**self._options(), "user_agent": "cloudguard-reap"}
            self._clients[key] = _CLIENTS[kind](self._credential, subscription, options)
        return self._clients[key]


def _compute(credential: Any, subscription: str, options: dict[str, Any]) -> Any:
    from azure.mgmt.compute import ComputeManagementClient

    return ComputeManagementClient(credential, subscription, **options)


def _resources(credential: Any, subscription: str, options: dict[str, Any]) -> Any:
    from azure.mgmt.resource.resources import ResourceManagementClient

    return ResourceManagementClient(credential, subscription, **options)


def _network(credential: Any, subscription: str, options: dict[str, Any]) -> Any:
    from azure.mgmt.network import NetworkManagementClient

    return NetworkManagementClient(credential, subscription, **options)


_CLIENTS = {
    "compute": _compute,
    "network": _network,
    "resources": _resources,
}


def _covers(scope: str, resource_id: str) -> bool:
    """A lock at `scope` applies to `resource_id`: the same scope or one above it."""
    scope, target = scope.rstrip("/").casefold(), resource_id.casefold()
    return target == scope or target.startswith(scope + "/")


def _attachment(disk: Any) -> str:
    owner = getattr(disk, "managed_by", None)
    return (
        str(owner)
        if owner
        else f"nothing named, but its state is {normalise.text(disk.disk_state)}"
    )


def _kept_disks(vm: Any) -> tuple[str, ...]:
    """The ARM ids of the managed disks that outlive `vm`'s delete (deleteOption not Delete)."""
    storage = getattr(vm, "storage_profile", None)
    disks = [getattr(storage, "os_disk", None), *(getattr(storage, "data_disks", None) or ())]
    return tuple(
        str(disk.managed_disk.id)
        for disk in disks
        if disk is not None
        and getattr(getattr(disk, "managed_disk", None), "id", None)
        and normalise.text(disk.delete_option).casefold() != "delete"
    )


def _left_by(vm: Any) -> tuple[str, ...]:
    """What deleting `vm` leaves billing: disks and NICs whose deleteOption is not Delete."""
    left: list[str] = []
    storage = getattr(vm, "storage_profile", None)
    os_disk = getattr(storage, "os_disk", None)
    if os_disk is not None and normalise.text(os_disk.delete_option).casefold() != "delete":
        left.append(f"OS disk {os_disk.name}")
    for disk in getattr(storage, "data_disks", None) or ():
        if normalise.text(disk.delete_option).casefold() != "delete":
            managed = getattr(disk, "managed_disk", None)
            left.append(f"data disk {getattr(managed, 'id', None) or disk.name}")
    network = getattr(vm, "network_profile", None)
    for nic in getattr(network, "network_interfaces", None) or ():
        if normalise.text(nic.delete_option).casefold() != "delete":
            left.append(f"NIC {nic.id} (and any public IP on it)")
    return tuple(left)


class _Mark(NamedTuple):
    """What a group's listing says of one member: a change means it is not the one read."""

    type: str
    created: str
    tags: frozenset[tuple[str, str]]


def _mark(entry: dict[str, Any]) -> _Mark:
    tags = entry.get("tags") or {}
    return _Mark(
        str(entry.get("type") or "").casefold(),
        str(entry.get("createdTime") or ""),
        frozenset((str(k), str(v)) for k, v in tags.items()),
    )


class _Address(NamedTuple):
    sub: str
    group: str
    name: str
    arm_type: str  # Namespace/type[/child type], as the id spells it; "" for a group


@dataclass(frozen=True)
class _Member:
    """A resource a group holds, read as an item of its own would be (a `Target`)."""

    provider: str
    account: str
    region: str
    group: str
    id: str
    name: str
    kind: str
    action: str = "delete"


def _address(item: Target, error: type[ReadError] | type[ActionError]) -> _Address:
    """The item's ARM id, which must agree with the item: its subscription, and its kind
    with the id's type (the id is what the audit saw; a hand-edited plan must not redirect
    an action to another kind of resource)."""
    match = _ID.match(item.id)
    source = f"azure {item.kind} {item.id}"
    if match is None:
        raise error(source, f"not an ARM id of a {item.kind}")
    segments = (match["path"] or "").split("/") if match["namespace"] else []
    if len(segments) % 2:
        raise error(source, "an ARM id ends in a type without a name")
    arm_type = "/".join([match["namespace"], *segments[0::2]]) if segments else ""
    kind = azure_kinds.kind_of(arm_type) if arm_type else kinds.RESOURCE_GROUP
    if kind != item.kind:
        raise error(source, f"not an ARM id of a {item.kind} (its type is {arm_type or 'a group'})")
    if not item.account.strip():
        raise error(source, "the item names no subscription (account)")
    if any(part in (".", "..", "") for part in (match["sub"], match["group"], *segments)):
        raise error(source, "an empty, '.' or '..' segment in the id")
    if match["sub"].casefold() != item.account.casefold():
        raise error(source, f"id names subscription {match['sub']}, the item {item.account}")
    name = segments[-1] if segments else match["group"]
    return _Address(match["sub"], match["group"], name, arm_type)


def _gone_is_none(read: Callable[[], Any], codes: frozenset[str] = _GONE_CODES) -> Any:
    """`read()`, or None when ARM says the very thing read is not found (`codes`); any other
    404 (its subscription or group missing) is raised: cannot tell."""
    from azure.core.exceptions import ResourceNotFoundError

    try:
        return read()
    except ResourceNotFoundError as exc:
        if _arm_code(exc) in codes:
            return None
        raise

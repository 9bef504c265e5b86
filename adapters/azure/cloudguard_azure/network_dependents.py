"""A deleted VM's network dependents: the NICs and public IPs it leaves billing.

`--with-dependents` deletes them as items of their own, each re-read live
(azure-mgmt-network, `network_interfaces.get` / `public_ip_addresses.get`)
and deleted only when that read shows it attached to nothing: a NIC whose
`virtualMachine` (or `privateEndpoint`) is gone, a public IP whose
`ipConfiguration` (or `natGateway`) is gone.

Identity: a NIC becomes a dependent only if, at its VM's live read, the NIC
itself names that very VM (`virtualMachine.id`) and the VM keeps it
(`deleteOption` not Delete); a public IP only if, at its NIC's live read, it
names that NIC's IP configuration. Its `resourceGuid` is taken from that
read, and its own read later must show the same one: a NIC or public IP
deleted and re-created under the name in between is another resource. The
core's checks then apply as to any item: the fleet's task tag and the
VM's task and generation tags, the VM's verdict, no protection tag or lock.
"""

from __future__ import annotations

import re
from typing import Any

from cloudguard.cloud.reaping import Dependent, ReadError
from cloudguard.cloud.records import Resource
from cloudguard_azure import normalise

NETWORK_KINDS = frozenset({"nic", "public-ip"})
_ID = re.compile(
    r"^/subscriptions/(?P<sub>[^/]+)/resourceGroups/(?P<group>[^/]+)"
    r"/providers/Microsoft\.Network/(?:networkInterfaces|publicIPAddresses)/(?P<name>[^/]+)$",
    re.IGNORECASE,
)


def kept_nics(vm: Any, network: Any, vm_id: str, source: str) -> tuple[Dependent, ...]:
    """The NICs `vm`'s delete leaves (deleteOption not Delete) that name `vm` as their VM."""
    found: list[Dependent] = []
    for reference in (
        getattr(getattr(vm, "network_profile", None), "network_interfaces", None) or ()
    ):
        if normalise.text(reference.delete_option).casefold() == "delete" or not reference.id:
            continue
        group, name = _group_and_name(str(reference.id), vm_id, source)
        nic = _get(network.network_interfaces.get, group, name, source)
        if nic is None or not _same(_ref_id(nic.virtual_machine), vm_id):
            continue  # gone, or not this VM's: nothing the delete leaves
        found.append(Dependent("nic", str(nic.id), normalise.text(nic.resource_guid)))
    return tuple(found)


def read_nic(
    network: Any, group: str, name: str, sub: str, source: str
) -> tuple[Resource, str | None, tuple[str, ...], tuple[Dependent, ...]] | None:
    """The NIC now: (resource, what it is attached to, what its delete leaves, dependents)."""
    nic = _get(network.network_interfaces.get, group, name, source)
    if nic is None:
        return None
    attached = _nic_attachment(nic)
    left: list[str] = []
    addresses: list[Dependent] = []
    for configuration in nic.ip_configurations or ():
        address_id = _ref_id(configuration.public_ip_address)
        if not address_id:
            continue
        left.append(f"public IP {address_id}")
        ip_group, ip_name = _group_and_name(address_id, str(nic.id), source)
        address = _get(network.public_ip_addresses.get, ip_group, ip_name, source)
        if address is not None and _same(_ref_id(address.ip_configuration), str(configuration.id)):
            addresses.append(
                Dependent("public-ip", str(address.id), normalise.text(address.resource_guid))
            )
    return _resource(nic, "nic", sub), attached, tuple(left), tuple(addresses)


def read_nic_last(
    network: Any, group: str, name: str, sub: str, source: str
) -> tuple[Resource, str | None, tuple[str, ...], tuple[Dependent, ...]] | None:
    """`read_nic`, with the NIC's own GET the last read: when its public IPs were read after
    it, the NIC once more, whose tags and attachment are the ones judged (a tag put on it
    between the two is seen). Public IPs that are not the ones just read: unknown state."""
    first = read_nic(network, group, name, sub, source)
    if first is None or not first[2]:
        return first
    nic = _get(network.network_interfaces.get, group, name, source)
    if nic is None:
        return None
    now = tuple(
        f"public IP {address_id}"
        for configuration in nic.ip_configurations or ()
        if (address_id := _ref_id(configuration.public_ip_address))
    )
    if now != first[2]:
        raise ReadError(source, "its public IPs changed while it was read")
    return _resource(nic, "nic", sub), _nic_attachment(nic), first[2], first[3]


def _nic_attachment(nic: Any) -> str | None:
    return _ref_id(nic.virtual_machine) or _ref_id(nic.private_endpoint) or None


def read_public_ip(
    network: Any, group: str, name: str, sub: str, source: str
) -> tuple[Resource, str | None] | None:
    """The public IP now: (resource, what it is attached to)."""
    address = _get(network.public_ip_addresses.get, group, name, source)
    if address is None:
        return None
    attached = _ref_id(address.ip_configuration) or _ref_id(address.nat_gateway) or None
    return _resource(address, "public-ip", sub), attached


def read_uid(network: Any, kind: str, group: str, name: str, source: str) -> str | None:
    """A NIC's or public IP's resourceGuid now (None: gone): the GET that comes after its
    group's listing must read the same one, or it was re-created in between."""
    read = network.network_interfaces.get if kind == "nic" else network.public_ip_addresses.get
    found = _get(read, group, name, source)
    return None if found is None else normalise.text(found.resource_guid)


def begin_delete(network: Any, kind: str, group: str, name: str) -> Any:
    """Send the delete once (retry_total=0): a lost answer is a failure to look at."""
    if kind == "nic":
        return network.network_interfaces.begin_delete(group, name, retry_total=0)
    return network.public_ip_addresses.begin_delete(group, name, retry_total=0)


def _resource(found: Any, kind: str, sub: str) -> Resource:
    return Resource(
        provider="azure",
        account=sub,
        region=str(found.location or ""),
        group=normalise.group_of(str(found.id)),
        id=str(found.id),
        name=str(found.name or ""),
        kind=kind,
        size="",
        power_state="unknown",  # no power state: a public IP bills while it exists
        created=None,  # Microsoft.Network records no creation time
        tags={str(k): str(v) for k, v in (found.tags or {}).items()},
        source=f"azure:{sub}",
        uid=normalise.text(found.resource_guid),
    )


def _get(read: Any, group: str, name: str, source: str) -> Any:
    """One GET. ARM's ResourceNotFound is None; anything else is a ReadError (state unknown)."""
    from azure.core.exceptions import ResourceNotFoundError

    from cloudguard_azure.session import arm_code as _arm_code
    from cloudguard_azure.session import describe_error

    try:
        return read(group, name)
    except ResourceNotFoundError as exc:
        if _arm_code(exc) == "resourcenotfound":
            return None
        raise ReadError(source, describe_error(exc)) from exc
    except Exception as exc:  # 403, throttled past retries: cannot tell
        raise ReadError(source, describe_error(exc)) from exc


def _ref_id(reference: Any) -> str:
    return str(getattr(reference, "id", None) or "")


def _same(one: str, other: str) -> bool:
    return bool(one) and one.casefold() == other.casefold()


def _group_and_name(arm_id: str, parent_id: str, source: str) -> tuple[str, str]:
    """(group, name) of a NIC or public IP its parent names, in the parent's subscription."""
    match = _ID.match(arm_id)
    parent_sub = parent_id.split("/")[2] if parent_id.count("/") > 2 else ""
    if match is None or match["sub"].casefold() != parent_sub.casefold():
        raise ReadError(source, f"names {arm_id!r}: not a NIC or public IP in its subscription")
    return match["group"], match["name"]

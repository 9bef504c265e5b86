"""`--with-dependents` and a deleted VM's network: the NIC and public IP it leaves billing.

End to end through the CLI, with the real azure-mgmt-network (and compute, resource,
locks) against the fake ARM over HTTPS. A NIC or public IP is deleted only when its own
live read shows it attached to nothing, with the resourceGuid the VM's (NIC's) read saw,
the fleet's tags, and no protection; every skip is logged with its reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from azure.core.exceptions import HttpResponseError
from azure.mgmt.network import NetworkManagementClient
from azure_helpers import sdk_options
from cloudguard_azure import demo
from cloudguard_azure.fake_arm.compute.models import VirtualMachine
from cloudguard_azure.fake_arm.network import models as network_models
from cloudguard_azure.fake_arm.network.models import NetworkInterface, add_nic, attach_nic
from cloudguard_azure.fake_arm.state import ArmState
from named_checks import broken
from test_azure_reaper import Incident, events, incident, writes

__all__ = ["incident"]  # the fixture, shared with test_azure_reaper


def _kept_nic(incident: Incident, **extra: dict[str, str]) -> NetworkInterface:
    """The incident VM keeps its NIC on delete (deleteOption Detach); NIC and IP carry its tags.
    The plan is a VM's (`--kind vm`): its NIC and IP are what its delete leaves."""
    incident.kinds = ("vm",)
    incident.vm.nic_delete_option = "Detach"
    return add_nic(incident.arm.state, incident.vm, tags=dict(incident.vm.tags), **extra)


@pytest.fixture
def after_vm_delete(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Callable[[], None]]]:
    """Changes made the moment ARM finishes the VM's delete: between the VM's read and its
    dependents' own reads, where only the re-read can see them."""
    changes: list[Callable[[], None]] = []
    original = network_models.vm_deleted

    def deleted(state: ArmState, vm: VirtualMachine) -> None:
        original(state, vm)
        for change in changes:
            change()

    monkeypatch.setattr(network_models, "vm_deleted", deleted)
    yield changes


def _dependents(log_events: list[dict[str, object]]) -> set[tuple[object, object, object]]:
    return {(e["kind"], e["name"], e["event"]) for e in log_events if e.get("dependent_of")}


def test_with_dependents_leaves_no_nic_or_public_ip_behind(incident: Incident) -> None:
    state = incident.arm.state
    nic = _kept_nic(incident)
    address_id, vm_id = nic.public_ip, incident.vm.id
    plan = incident.plan("--action", "delete", "--with-dependents")
    incident.arm.faults.reset_counts()

    code, out, log = incident.apply(plan, "--yes")

    assert code == 0, out
    assert state.vm(demo.SUB_PILOT, "pilot", demo.INCIDENT_VM) is None
    assert not state.nics, f"the deleted VM's NIC is left behind: {list(state.nics)}\n{out}"
    assert not state.public_ips, f"its public IP is left behind: {list(state.public_ips)}\n{out}"
    # Each sent once, retries off, in order: the VM, its NIC, then the NIC's public IP.
    assert writes(incident.arm) == {
        "DELETE vm_delete": 1,
        "DELETE nic_delete": 1,
        "DELETE public_ip_delete": 1,
    }
    # What the three items cost in reads: the VM 8 (its kept NIC, then itself once more: its
    # own GET is its last read, issue 32), the NIC 8 (its public IP, then itself once more),
    # the public IP 6; each 5 of them for protection.
    reads = {k: n for k, n in incident.arm.faults.requests.items() if k.startswith("GET ")}
    assert reads == {
        "GET vm_get": 2,
        "GET nic_get": 3,
        "GET public_ip_get": 2,
        "GET resource_group_get": 3,
        "GET subscriptions_get": 3,
        "GET locks_list": 9,
        "GET operation": 1,
        "GET network_operation": 2,
    }, reads
    logged = events(log)
    assert _dependents(logged) == {
        ("nic", nic.name, "intent"),
        ("nic", nic.name, "done"),
        ("public-ip", f"{demo.INCIDENT_VM}-ip", "intent"),
        ("public-ip", f"{demo.INCIDENT_VM}-ip", "done"),
    }
    by_kind = {e["kind"]: e for e in logged if e["event"] == "intent" and e.get("dependent_of")}
    assert by_kind["nic"]["dependent_of"] == vm_id
    assert by_kind["nic"]["uid"] == nic.resource_guid
    assert by_kind["public-ip"]["dependent_of"] == nic.id
    assert by_kind["public-ip"]["id"] == address_id
    (nic_done,) = [e for e in logged if e["event"] == "done" and e["kind"] == "nic"]
    assert nic_done["left_billing"] == [f"public IP {address_id}"]


def test_without_with_dependents_the_nic_is_reported_not_deleted(incident: Incident) -> None:
    state = incident.arm.state
    _kept_nic(incident)
    plan = incident.plan("--action", "delete")

    code, out, log = incident.apply(plan, "--yes")

    assert code == 0, out
    assert writes(incident.arm) == {"DELETE vm_delete": 1}
    assert len(state.nics) == 1 and len(state.public_ips) == 1  # the control: they exist
    (done,) = [e for e in events(log) if e["event"] == "done"]
    assert any(left.startswith("NIC ") for left in done["left_billing"]), done


def test_a_nic_attached_to_another_vm_after_the_plan_is_skipped_not_deleted(
    incident: Incident, after_vm_delete: list[Callable[[], None]]
) -> None:
    state = incident.arm.state
    nic = _kept_nic(incident)
    healthy = next(vm for vm in state.vms.values() if vm.name != demo.INCIDENT_VM)
    plan = incident.plan("--action", "delete", "--with-dependents")
    # Someone attaches the freed NIC to a healthy VM right after the incident VM's delete.
    after_vm_delete.append(lambda: attach_nic(state, nic, healthy))
    incident.arm.faults.reset_counts()

    code, out, log = incident.apply(plan, "--yes")

    # The log first: ARM's own NicInUse refusal must not be what saved it.
    assert "DELETE nic_delete" not in writes(incident.arm), broken(
        "an-attached-nic-is-kept",
        f"the NIC attached to another VM after the plan was sent a DELETE: {out}",
    )
    (skipped,) = [e for e in events(log) if e["event"] == "skipped" and e["kind"] == "nic"]
    details = [s["detail"] for s in skipped["skips"] if s["code"] == "attached"]
    assert details == [f"is attached to {healthy.id}"], skipped
    assert code == 0, out
    assert state.nics[nic.id.casefold()].virtual_machine == healthy.id
    # Its public IP is its NIC's: not reached, not deleted.
    assert len(state.public_ips) == 1
    assert writes(incident.arm) == {"DELETE vm_delete": 1}


def test_a_nic_re_created_under_its_name_is_not_the_one_the_vm_read_saw(
    incident: Incident, after_vm_delete: list[Callable[[], None]]
) -> None:
    state = incident.arm.state
    nic = _kept_nic(incident, public_ip=False)
    vm = incident.vm
    plan = incident.plan("--action", "delete", "--with-dependents")

    def recreate() -> None:  # same name, same tags, attached to nothing: a new resourceGuid
        state.nics.pop(nic.id.casefold())
        again = add_nic(state, vm, tags=dict(nic.tags), public_ip=False)
        again.virtual_machine = None

    after_vm_delete.append(recreate)

    code, out, log = incident.apply(plan, "--yes")

    assert "DELETE nic_delete" not in writes(incident.arm), broken(
        "a-re-created-nic-is-kept", f"a NIC re-created under the kept one's name was deleted: {out}"
    )
    (skipped,) = [e for e in events(log) if e["event"] == "skipped" and e["kind"] == "nic"]
    assert [s["code"] for s in skipped["skips"]] == ["not-the-planned-resource"], skipped
    assert code == 0, out


def test_a_protected_public_ip_is_skipped(incident: Incident) -> None:
    state = incident.arm.state
    nic = _kept_nic(incident, ip_tags={**incident.vm.tags, "do-not-reap": "static ip"})
    plan = incident.plan("--action", "delete", "--with-dependents")

    code, out, log = incident.apply(plan, "--yes")

    assert "DELETE public_ip_delete" not in writes(incident.arm), broken(
        "left-alone", f"a public IP carrying do-not-reap was acted on (deleted): {out}"
    )
    (skipped,) = [e for e in events(log) if e["event"] == "skipped" and e["kind"] == "public-ip"]
    assert skipped["skips"] == [
        {"code": "protected", "detail": "carries protection tag 'do-not-reap'"}
    ], skipped
    assert code == 0, out
    assert not state.nics  # the NIC itself went: the control that the IP was reached
    assert nic.public_ip is not None and nic.public_ip.casefold() in state.public_ips


def test_a_nic_without_the_fleet_tags_is_skipped(incident: Incident) -> None:
    state = incident.arm.state
    incident.vm.nic_delete_option = "Detach"
    add_nic(state, incident.vm, tags={}, public_ip=False)
    plan = incident.plan("--action", "delete", "--with-dependents")

    code, out, log = incident.apply(plan, "--yes")

    assert "DELETE nic_delete" not in writes(incident.arm), out
    (skipped,) = [e for e in events(log) if e["event"] == "skipped" and e["kind"] == "nic"]
    assert [s["code"] for s in skipped["skips"]] == ["tags-unreadable"], skipped
    assert code == 0, out
    assert json.loads(plan.read_text())["with_dependents"] is True


# -- the fake's Microsoft.Network, as the real azure-mgmt-network reads it ------------------


def test_the_fake_network_answers_as_arm_does(incident: Incident) -> None:
    state = incident.arm.state
    vm = incident.vm
    nic = add_nic(state, vm, tags={"task-id": "t"})
    client = NetworkManagementClient(
        incident.arm.credential(), demo.SUB_PILOT, **sdk_options(incident.arm)
    )
    with client:
        read = client.network_interfaces.get("pilot", nic.name)
        assert read.virtual_machine.id == vm.id and read.resource_guid == nic.resource_guid
        (configuration,) = read.ip_configurations
        address = client.public_ip_addresses.get("pilot", f"{vm.name}-ip")
        assert address.ip_configuration.id == configuration.id
        assert configuration.public_ip_address.id == address.id
        # ARM refuses to delete what is in use: a NIC on a VM, a public IP on a NIC.
        with pytest.raises(HttpResponseError, match="NicInUse"):
            client.network_interfaces.begin_delete("pilot", nic.name).result()
        with pytest.raises(HttpResponseError, match="PublicIPAddressInUse"):
            client.public_ip_addresses.begin_delete("pilot", address.name).result()
        # The VM's delete (deleteOption Delete) takes the NIC; the public IP stays, detached.
        network_models.vm_deleted(state, vm)
        assert not state.nics
        assert client.public_ip_addresses.get("pilot", address.name).ip_configuration is None
        client.public_ip_addresses.begin_delete("pilot", address.name).result()  # an LRO
    assert not state.public_ips


# What each irreversible delete is sent to, and the fake's name for the request.
DELETES = {
    "vm": ("/virtualMachines/", "DELETE vm_delete"),
    "disk": ("/disks/", "DELETE disk_delete"),
    "nic": ("/networkInterfaces/", "DELETE nic_delete"),
    "public-ip": ("/publicIPAddresses/", "DELETE public_ip_delete"),
}


@pytest.mark.parametrize("kind", list(DELETES))
def test_an_irreversible_delete_whose_answer_is_lost_is_not_sent_again(
    incident: Incident, kind: str
) -> None:
    """Retries off for every delete: the fake's request log holds one DELETE, not azure-core's
    default four, and the item is `failed` (1) for someone to look at."""
    state = incident.arm.state
    if kind == "disk":
        state.add_disk(demo.SUB_PILOT, "pilot", "disk-fm7c799d-data", tags=dict(incident.vm.tags))
    if kind in ("nic", "public-ip"):
        _kept_nic(incident)
    plan = incident.plan("--action", "delete", "--with-dependents", "--delete-data", "disk")
    where, request = DELETES[kind]
    incident.arm.faults.inject(500, match=where, method="DELETE", times=1)
    incident.arm.faults.reset_counts()

    code, out, log = incident.apply(plan, "--yes")

    sent = incident.arm.faults.requests[request]
    assert sent == 1, broken("sent-once", f"{request} sent {sent} times for one action: {out}")
    (failed,) = [e for e in events(log) if e["event"] == "failed"]
    assert failed["kind"] == kind and "500" in failed["detail"], failed
    assert code == 1, out


def test_a_nic_naming_another_vm_at_the_vms_read_is_not_its_dependent(
    incident: Incident, after_vm_delete: list[Callable[[], None]]
) -> None:
    """The VM lists the NIC, but the NIC names another VM: not the VM's to take, even once it
    is attached to nothing by the time its own read would come."""
    state = incident.arm.state
    nic = _kept_nic(incident, public_ip=False)
    healthy = state.vm(demo.SUB_PILOT, "pilot", "vm-fm9b17aa-wkr-01")
    assert healthy is not None
    attach_nic(state, nic, healthy)
    plan = incident.plan("--action", "delete", "--with-dependents")
    after_vm_delete.append(lambda: setattr(nic, "virtual_machine", None))

    code, out, log = incident.apply(plan, "--yes")

    assert "DELETE nic_delete" not in writes(incident.arm), broken(
        "only-a-nic-naming-the-vm-is-its-dependent",
        f"a NIC that named another VM at the VM's read was deleted: {out}",
    )
    assert [e for e in events(log) if e.get("kind") == "nic"] == []
    assert code == 0, out


def test_a_public_ip_naming_another_nic_at_the_nics_read_is_not_its_dependent(
    incident: Incident, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The NIC lists the address, but the address names another NIC's IP configuration: not
    the NIC's to take, even once it is attached to nothing after the NIC's delete."""
    state = incident.arm.state
    nic = _kept_nic(incident)
    address = state.public_ips[(nic.public_ip or "").casefold()]
    address.ip_configuration = f"{nic.id}-other/ipConfigurations/ipconfig1"
    plan = incident.plan("--action", "delete", "--with-dependents")
    removed = network_models.remove_nic

    def remove_then_detach(arm_state: ArmState, removed_nic: NetworkInterface) -> None:
        removed(arm_state, removed_nic)
        address.ip_configuration = None

    monkeypatch.setattr(network_models, "remove_nic", remove_then_detach)

    code, out, log = incident.apply(plan, "--yes")

    assert "DELETE nic_delete" in writes(incident.arm), out  # the NIC itself went: it was read
    assert "DELETE public_ip_delete" not in writes(incident.arm), broken(
        "only-an-address-naming-the-nic-is-its-dependent",
        f"a public IP that named another NIC at the NIC's read was deleted: {out}",
    )
    assert [e for e in events(log) if e.get("kind") == "public-ip"] == []
    assert code == 0, out

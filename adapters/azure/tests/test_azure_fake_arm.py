"""The fake ARM's wire format, proven by the real azure-mgmt-* clients deserializing it."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from datetime import UTC, datetime

import pytest
from azure.core.exceptions import DecodeError, HttpResponseError, ResourceNotFoundError
from azure.mgmt.compute import ComputeManagementClient
from azure.mgmt.resource.resources import ResourceManagementClient
from azure.mgmt.resource.subscriptions import SubscriptionClient
from azure_helpers import SUB_A, SUB_B, sdk_options
from cloudguard_azure.fake_arm import FakeArm
from named_checks import broken


def compute(arm: FakeArm, sub: str = SUB_A) -> ComputeManagementClient:
    return ComputeManagementClient(arm.credential(), sub, **sdk_options(arm))


def raw_get(arm: FakeArm, path: str, headers: dict[str, str]) -> tuple[int, dict]:
    context = ssl.create_default_context(cafile=arm.ca_pem)
    request = urllib.request.Request(arm.base_url + path, headers=headers)
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, {**json.loads(exc.read()), "_headers": dict(exc.headers)}


def test_subscriptions_and_resource_groups_deserialize(arm: FakeArm) -> None:
    arm.state.add_subscription(SUB_A, "fleet")
    arm.state.add_subscription(SUB_B, "pilot")
    arm.state.add_group(SUB_A, "pilot", "westeurope")
    arm.state.add_group(SUB_A, "workers", "northeurope")

    subs = list(SubscriptionClient(arm.credential(), **sdk_options(arm)).subscriptions.list())
    assert [(s.subscription_id, s.display_name, s.state) for s in subs] == [
        (SUB_A, "fleet", "Enabled"),
        (SUB_B, "pilot", "Enabled"),
    ]
    groups = ResourceManagementClient(arm.credential(), SUB_A, **sdk_options(arm))
    listed = list(groups.resource_groups.list())
    assert [(g.name, g.location, g.properties.provisioning_state) for g in listed] == [
        ("pilot", "westeurope", "Succeeded"),
        ("workers", "northeurope", "Succeeded"),
    ]


def test_list_all_status_only_pages_and_carries_power_state(arm: FakeArm) -> None:
    arm.faults.page_size = 7
    made = arm.state.seed_fleet([SUB_A], groups_per_subscription=4, vms_per_group=25)

    vms = list(compute(arm).virtual_machines.list_all(status_only="true"))

    assert len(vms) == made == 100
    assert arm.faults.requests["GET vm_list_all"] == 15  # ceil(100 / 7): one request per page
    assert len({vm.id for vm in vms}) == 100
    first = vms[0]
    codes = [s.code for s in first.instance_view.statuses]
    assert codes == ["ProvisioningState/succeeded", "PowerState/running"]
    assert first.hardware_profile.vm_size == "Standard_D2as_v5"
    assert first.time_created == datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    assert first.type == "Microsoft.Compute/virtualMachines"


def test_list_without_status_only_has_no_instance_view(arm: FakeArm) -> None:
    arm.state.add_vm(SUB_A, "pilot", "vm-1")
    (vm,) = compute(arm).virtual_machines.list_all()
    assert vm.instance_view is None


def test_per_group_list_instance_view_and_get(arm: FakeArm) -> None:
    arm.state.add_vm(SUB_A, "pilot", "vm-1", power_state="deallocated", size="Standard_D4as_v6")
    arm.state.add_vm(SUB_A, "other", "vm-2")
    client = compute(arm)

    assert [vm.name for vm in client.virtual_machines.list("PILOT")] == ["vm-1"]
    view = client.virtual_machines.instance_view("pilot", "vm-1")
    assert [s.code for s in view.statuses][-1] == "PowerState/deallocated"
    assert view.statuses[-1].display_status == "VM deallocated"
    got = client.virtual_machines.get("pilot", "vm-1", expand="instanceView")
    assert got.hardware_profile.vm_size == "Standard_D4as_v6"
    assert got.instance_view.statuses[-1].code == "PowerState/deallocated"
    with pytest.raises(ResourceNotFoundError):
        client.virtual_machines.get("pilot", "nope")


def test_disks_managed_by_and_disk_state(arm: FakeArm) -> None:
    vm = arm.state.add_vm(SUB_A, "pilot", "vm-1")
    arm.state.add_disk(SUB_A, "pilot", "data-attached", managed_by=vm.id)
    arm.state.add_disk(SUB_A, "pilot", "data-loose", tags={"task-id": "t1"}, size_gb=256)

    disks = {d.name: d for d in compute(arm).disks.list()}

    assert disks["data-attached"].managed_by == vm.id
    assert disks["data-attached"].disk_state == "Attached"
    assert disks["data-loose"].managed_by is None
    assert disks["data-loose"].disk_state == "Unattached"
    assert disks["data-loose"].disk_size_gb == 256
    assert disks["data-loose"].sku.name == "Premium_LRS"


def test_deallocate_and_delete_are_long_running_operations(arm: FakeArm) -> None:
    vm = arm.state.add_vm(SUB_A, "pilot", "vm-1")
    arm.state.add_disk(SUB_A, "pilot", "data", managed_by=vm.id)
    client = compute(arm)

    client.virtual_machines.begin_deallocate("pilot", "vm-1", polling_interval=0).result()
    assert arm.state.vm(SUB_A, "pilot", "vm-1").power_state == "deallocated"  # type: ignore[union-attr]
    assert arm.faults.requests["POST vm_deallocate"] == 1
    assert arm.faults.requests["GET operation"] >= 1  # the SDK polled Azure-AsyncOperation

    client.virtual_machines.begin_delete("pilot", "vm-1", polling_interval=0).result()
    assert arm.state.vm(SUB_A, "pilot", "vm-1") is None
    (disk,) = arm.state.disks_in(SUB_A)
    assert disk.managed_by is None and disk.disk_state == "Unattached"


def test_lro_headers_are_the_ones_arm_sends(arm: FakeArm) -> None:
    arm.state.add_vm(SUB_A, "pilot", "vm-1")
    client = compute(arm)
    captured = {}

    def keep(response: object) -> None:
        captured.update(response.http_response.headers)  # type: ignore[attr-defined]

    client.virtual_machines.begin_deallocate(
        "pilot", "vm-1", polling_interval=0, raw_response_hook=keep
    ).result()
    assert "/operations/" in captured["Azure-AsyncOperation"]
    assert "monitor=true" in captured["Location"]


def test_missing_bearer_token_is_401_like_arm(arm: FakeArm) -> None:
    arm.state.add_subscription(SUB_A)
    path = f"/subscriptions/{SUB_A}/providers/Microsoft.Compute/virtualMachines?api-version=x"
    status, body = raw_get(arm, path, {})
    assert status == 401
    assert body["error"]["code"] == "AuthenticationFailed"
    assert "invalid_token" in body["_headers"]["WWW-Authenticate"]

    status, body = raw_get(arm, path, {"Authorization": "Bearer anything"})
    assert status == 200 and body == {"value": []}


def test_missing_api_version_is_400(arm: FakeArm) -> None:
    status, body = raw_get(arm, "/subscriptions", {"Authorization": "Bearer t"})
    assert status == 400
    assert body["error"]["code"] == "MissingApiVersionParameter"


def test_faults_reach_the_sdk(arm: FakeArm) -> None:
    arm.state.seed_fleet([SUB_A, SUB_B], 1, 3)
    arm.faults.forbid(SUB_B)
    with pytest.raises(HttpResponseError) as forbidden:
        list(compute(arm, SUB_B).virtual_machines.list_all(status_only="true"))
    assert forbidden.value.status_code == 403
    assert forbidden.value.error.code == "AuthorizationFailed"  # type: ignore[union-attr]

    arm.faults.page_size = 2
    arm.faults.malform_page(SUB_A, page=1)
    with pytest.raises(DecodeError):
        list(compute(arm).virtual_machines.list_all(status_only="true"))


def test_request_counter_and_latency(arm: FakeArm) -> None:
    """The latency is proven by the fake's own log of when each request arrived: two pages
    are two requests, the second sent only once the first was answered, so it arrives at
    least the latency after the first (the server's clock, not the test's). The latency is
    several times the gap the SDK leaves between pages without one (about 0.05 s)."""
    for name in ("vm-1", "vm-2"):
        arm.state.add_vm(SUB_A, "pilot", name)
    arm.faults.page_size = 1
    arm.faults.latency = 0.3

    listed = list(compute(arm).virtual_machines.list_all(status_only="true"))

    assert sorted(vm.name for vm in listed) == ["vm-1", "vm-2"]
    assert arm.faults.total_requests == 2
    first, second = arm.faults.arrivals
    assert second - first >= 0.3, broken(
        "latency-before-each-answer",
        f"the second page arrived {second - first:.3f} s after the first",
    )
    arm.faults.reset_counts()
    assert arm.faults.total_requests == 0 and arm.faults.arrivals == []


def test_server_cleans_up_its_ca_files() -> None:
    from pathlib import Path

    from cloudguard_azure.fake_arm import serve

    with serve() as fake:
        pem = Path(fake.ca_pem)
        assert pem.is_file()
    assert not pem.exists() and not pem.parent.exists()

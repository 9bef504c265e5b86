"""AzureAdapter.sweep against the fake ARM, through the real azure-mgmt-* SDK."""

from __future__ import annotations

import itertools
import subprocess
import sys
from datetime import UTC, datetime
from importlib.metadata import entry_points

import pytest
from azure_helpers import FAST_RETRY, SUB_A, SUB_B, SUB_C, adapter, request_for
from cloudguard_azure.adapter import AzureAdapter, arm_scope, preflight
from cloudguard_azure.fake_arm import FakeArm
from named_checks import broken


def test_registered_under_the_adapters_entry_point_group() -> None:
    (found,) = [ep for ep in entry_points(group="cloudguard.adapters") if ep.name == "azure"]
    assert found.load() is AzureAdapter
    assert AzureAdapter().name == "azure"


def test_importing_the_adapter_imports_no_azure_sdk() -> None:
    code = (
        "import sys, cloudguard_azure.adapter; "
        "print(sorted(m for m in sys.modules if m == 'azure' or m.startswith('azure.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_one_paged_listing_per_subscription_across_many_pages(arm: FakeArm) -> None:
    arm.faults.page_size = 10
    made = arm.state.seed_fleet([SUB_A, SUB_B], groups_per_subscription=3, vms_per_group=40)

    result = adapter().sweep(request_for(arm, subscriptions=(SUB_A, SUB_B)))

    assert result.failures == ()
    assert len(result.resources) == made == 240
    assert len({r.id for r in result.resources}) == 240
    # 120 VMs per subscription at 10 a page: 12 pages each (`--kind vm`: no other listing).
    assert arm.faults.requests == {"GET vm_list_all": 24}
    assert {r.account for r in result.resources} == {SUB_A, SUB_B}


def test_vm_normalised_to_resource(arm: FakeArm) -> None:
    created = datetime(2026, 2, 3, 4, 5, 6, 789000, tzinfo=UTC)
    vm = arm.state.add_vm(
        SUB_A,
        "pilot",
        "vm-fm7c799d-wkr-01",
        size="Standard_D4as_v6",
        tags={"task-id": "cloud-noenv-c7"},
        time_created=created,
        location="westeurope",
    )

    (resource,) = adapter().sweep(request_for(arm)).resources

    assert resource.provider == "azure"
    assert resource.account == SUB_A
    assert resource.region == "westeurope"
    assert resource.group == "pilot"
    assert resource.id == vm.id
    assert resource.name == "vm-fm7c799d-wkr-01"
    assert resource.kind == "vm"
    assert resource.size == "Standard_D4as_v6"
    assert resource.power_state == "running"
    assert resource.created == created
    assert resource.tags == {"task-id": "cloud-noenv-c7"}
    assert resource.source == f"azure:{SUB_A}"


@pytest.mark.parametrize(
    ("arm_state", "normalised"),
    [
        ("running", "running"),
        ("starting", "starting"),
        ("stopping", "stopping"),
        ("stopped", "stopped"),
        ("deallocating", "deallocating"),
        ("deallocated", "deallocated"),
        ("hibernated", "unknown"),  # a code we do not model is not guessed at
        ("", "unknown"),  # no PowerState status at all (a VM still being created)
    ],
)
def test_power_state_from_status_codes(arm: FakeArm, arm_state: str, normalised: str) -> None:
    arm.state.add_vm(SUB_A, "pilot", "vm-1", power_state=arm_state)
    (resource,) = adapter().sweep(request_for(arm)).resources
    assert resource.power_state == normalised


def test_tag_names_keep_their_case_and_match_case_insensitively(arm: FakeArm) -> None:
    arm.state.add_vm(SUB_A, "pilot", "vm-1", tags={"Task-Id": "t1"})
    arm.state.add_vm(SUB_A, "pilot", "vm-2", tags={"TASK-ID": "t2", "Repository-Generation": "g"})
    arm.state.add_vm(SUB_A, "pilot", "vm-3", tags={"task-id": "t3"})

    resources = {r.name: r for r in adapter().sweep(request_for(arm)).resources}

    assert resources["vm-1"].tags == {"Task-Id": "t1"}
    assert resources["vm-2"].tags == {"TASK-ID": "t2", "Repository-Generation": "g"}
    assert [resources[n].tag("task-id") for n in ("vm-1", "vm-2", "vm-3")] == ["t1", "t2", "t3"]


def test_resource_group_filter_is_client_side_and_case_insensitive(arm: FakeArm) -> None:
    arm.state.add_vm(SUB_A, "Pilot", "vm-1", tags={"task-id": "t"})
    arm.state.add_vm(SUB_A, "workers", "vm-2", tags={"task-id": "t"})
    arm.state.add_disk(SUB_A, "pilot", "disk-1", tags={"task-id": "t"})
    arm.state.add_disk(SUB_A, "workers", "disk-2", tags={"task-id": "t"})

    result = adapter().sweep(request_for(arm, resource_groups=("PILOT",), kinds=("vm", "disk")))

    assert sorted(r.name for r in result.resources) == ["disk-1", "vm-1"]
    # Still one subscription-wide listing, never a per-group one.
    assert arm.faults.requests == {"GET vm_list_all": 1, "GET disk_list": 1}


def test_region_filter(arm: FakeArm) -> None:
    arm.state.add_vm(SUB_A, "pilot", "vm-we", location="westeurope")
    arm.state.add_vm(SUB_A, "pilot", "vm-ne", location="northeurope")
    result = adapter().sweep(request_for(arm, regions=("West Europe",)))
    assert [r.name for r in result.resources] == ["vm-we"]


def test_every_disk_is_reported_attached_or_not_with_its_identity(arm: FakeArm) -> None:
    """A disk bills while it exists: attached ones too are resources of their own (an
    untagged one is counted, not a finding)."""
    vm = arm.state.add_vm(SUB_A, "pilot", "vm-1", tags={"task-id": "t"})
    attached = arm.state.add_disk(
        SUB_A, "pilot", "attached", tags={"task-id": "t"}, managed_by=vm.id
    )
    arm.state.add_disk(SUB_A, "pilot", "loose-untagged")
    loose = arm.state.add_disk(
        SUB_A, "pilot", "loose-fleet", tags={"Task-ID": "t"}, sku="StandardSSD_LRS"
    )

    disks = adapter().sweep(request_for(arm, kinds=("disk",))).resources

    assert [(d.name, d.kind, d.size, d.group) for d in disks] == [
        # The SKU and the size its tier is priced by (cloudguard_azure.prices).
        ("attached", "disk", "Premium_LRS 128 GiB", "pilot"),
        ("loose-fleet", "disk", "StandardSSD_LRS 128 GiB", "pilot"),
        ("loose-untagged", "disk", "Premium_LRS 128 GiB", "pilot"),
    ]
    assert (disks[0].uid, disks[1].uid) == (attached.unique_id, loose.unique_id)
    assert disks[1].created == loose.time_created
    assert arm.faults.requests == {"GET disk_list": 1}  # `--kind disk`: its listing alone


def test_all_subscriptions_are_enumerated_with_the_subscriptions_api(arm: FakeArm) -> None:
    for sub in (SUB_A, SUB_B, SUB_C):
        arm.state.add_vm(sub, "pilot", f"vm-{sub[-4:]}")

    result = adapter().sweep(request_for(arm, subscriptions=(), all_subscriptions=True))

    assert result.failures == ()
    assert {r.account for r in result.resources} == {SUB_A, SUB_B, SUB_C}
    assert arm.faults.requests["GET subscriptions_list"] == 1


def test_subscriptions_are_swept_concurrently_within_the_bound(arm: FakeArm) -> None:
    subs = tuple(f"0b1f6471-1bf0-4dda-aec3-00000000000{i}" for i in range(6))
    for sub in subs:
        arm.state.add_vm(sub, "pilot", "vm-1")
    arm.faults.latency = 0.15

    result = adapter().sweep(request_for(arm, subscriptions=subs, concurrency=3))

    assert result.failures == () and len(result.resources) == 6
    # Bounded, and actually concurrent (the wall-clock gain is measured in benchmarks/).
    assert arm.faults.peak_in_flight == 3


# -- faults ----------------------------------------------------------------------------


def test_throttling_429_is_retried_after_retry_after(arm: FakeArm) -> None:
    """Proven by the fake's log of when each request arrived: each retry came at least the
    announced second after the 429 (the backoff alone is at most FAST_RETRY's 0.05 s)."""
    arm.state.add_vm(SUB_A, "pilot", "vm-1")
    arm.faults.inject(429, times=2, match="/virtualMachines", retry_after=1)

    result = adapter().sweep(request_for(arm))

    assert result.failures == () and [r.name for r in result.resources] == ["vm-1"]
    assert arm.faults.requests["GET vm_list_all"] == 3
    arrived = [
        at for at, line in zip(arm.faults.arrivals, arm.faults.log, strict=True)
        if line.startswith("GET ") and "/virtualMachines" in line
    ]  # fmt: skip
    gaps = [later - earlier for earlier, later in itertools.pairwise(arrived)]
    assert len(gaps) == 2 and min(gaps) >= 1.0, broken(
        "retry-after-honoured", f"retries arrived {gaps} s after a 429 saying Retry-After: 1"
    )


def test_transient_500_is_retried(arm: FakeArm) -> None:
    arm.state.add_vm(SUB_A, "pilot", "vm-1")
    arm.faults.inject(500, times=2, match="/virtualMachines")

    result = adapter().sweep(request_for(arm))

    assert result.failures == () and len(result.resources) == 1
    assert arm.faults.requests["GET vm_list_all"] == 3


def test_persistent_500_names_the_subscription(arm: FakeArm) -> None:
    arm.state.add_vm(SUB_A, "pilot", "vm-1")
    arm.faults.inject(500, times=100, match="/virtualMachines")

    result = adapter().sweep(request_for(arm))

    (failure,) = result.failures
    assert failure.source == f"azure subscription {SUB_A}"
    assert "HTTP 500" in failure.reason and "list_all" in failure.reason
    # 1 + 3 retries, twice: the subscription's second attempt resumes at the failed page
    assert arm.faults.requests["GET vm_list_all"] == 2 * (1 + FAST_RETRY.total)
    assert "attempt 2 of the subscription" in failure.reason


def test_403_for_one_subscription_is_named_and_the_others_reported(arm: FakeArm) -> None:
    arm.state.add_vm(SUB_A, "pilot", "vm-a")
    arm.state.add_vm(SUB_B, "pilot", "vm-b")
    arm.state.add_vm(SUB_C, "pilot", "vm-c")
    arm.faults.forbid(SUB_B)

    result = adapter().sweep(request_for(arm, subscriptions=(SUB_A, SUB_B, SUB_C)))

    assert sorted(r.name for r in result.resources) == ["vm-a", "vm-c"]
    (failure,) = result.failures
    assert failure.source == f"azure subscription {SUB_B}"
    assert failure.reason.startswith("HTTP 403 AuthorizationFailed")
    assert arm.faults.requests["GET vm_list_all"] == 3  # a 403 is not retried


def test_401_for_one_subscription_is_named_and_the_others_reported(arm: FakeArm) -> None:
    arm.state.add_vm(SUB_A, "pilot", "vm-a")
    arm.state.add_vm(SUB_B, "pilot", "vm-b")
    # A token from the wrong tenant: ARM answers 401 on every call for that subscription.
    arm.faults.inject(401, times=100, match=f"/subscriptions/{SUB_B}/")

    result = adapter().sweep(request_for(arm, subscriptions=(SUB_A, SUB_B)))

    assert [r.name for r in result.resources] == ["vm-a"]
    (failure,) = result.failures
    assert failure.source == f"azure subscription {SUB_B}"
    assert failure.reason.startswith("HTTP 401 InvalidAuthenticationTokenTenant")


def test_malformed_page_makes_the_subscription_a_failure_not_a_partial_list(
    arm: FakeArm,
) -> None:
    arm.faults.page_size = 5
    arm.state.seed_fleet([SUB_A, SUB_B], 1, 12)
    arm.faults.malform_page(SUB_A, page=1)

    result = adapter().sweep(request_for(arm, subscriptions=(SUB_A, SUB_B)))

    (failure,) = result.failures
    assert failure.source == f"azure subscription {SUB_A}"
    assert "unreadable response" in failure.reason
    assert {r.account for r in result.resources} == {SUB_B}  # none of SUB_A's first page
    assert len(result.resources) == 12


def test_unknown_subscription_is_named(arm: FakeArm) -> None:
    result = adapter().sweep(request_for(arm, subscriptions=(SUB_C,)))
    (failure,) = result.failures
    assert failure.source == f"azure subscription {SUB_C}"
    assert "HTTP 404 SubscriptionNotFound" in failure.reason


def test_no_subscription_is_a_failure_not_a_clean_sweep(arm: FakeArm) -> None:
    result = adapter().sweep(request_for(arm, subscriptions=()))
    (failure,) = result.failures
    assert "--subscription" in failure.reason and "--all-subscriptions" in failure.reason


def test_all_subscriptions_listing_refused_is_named(arm: FakeArm) -> None:
    arm.faults.inject(500, times=100, match="/subscriptions")
    result = adapter().sweep(request_for(arm, subscriptions=(), all_subscriptions=True))
    (failure,) = result.failures
    assert failure.source == "azure subscriptions (--all-subscriptions)"
    assert "HTTP 500" in failure.reason


def test_a_proxy_in_the_environment_never_carries_loopback_traffic(
    arm: FakeArm, monkeypatch: pytest.MonkeyPatch
) -> None:
    arm.state.add_vm(SUB_A, "pilot", "vm-1")
    # A proxy that does not exist: had the SDK used it, the sweep would fail.
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.2:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    result = adapter().sweep(request_for(arm))
    assert result.failures == () and len(result.resources) == 1


def test_an_explicit_credential_object_is_used_as_given(arm: FakeArm) -> None:
    arm.state.add_vm(SUB_A, "pilot", "vm-1")
    credential = arm.credential()
    result = AzureAdapter(credential).sweep(request_for(arm, credential=None))
    assert len(result.resources) == 1
    # A loopback endpoint's own audience, never the real ARM's (see credentials.py).
    assert credential.scopes_requested[0] == (f"{arm.base_url}/.default",)


@pytest.mark.parametrize(
    ("endpoint", "scope"),
    [
        (None, "https://management.azure.com/.default"),
        ("https://management.chinacloudapi.cn/", "https://management.chinacloudapi.cn/.default"),
        ("https://management.usgovcloudapi.net", "https://management.usgovcloudapi.net/.default"),
        ("https://127.0.0.1:8443", "https://127.0.0.1:8443/.default"),  # never the real audience
    ],
)
def test_tokens_are_asked_for_the_management_endpoints_own_scope(endpoint, scope) -> None:
    asked: list[str] = []

    class Recording:
        def get_token(self, *scopes: str, **_: object) -> object:
            asked.extend(scopes)
            return object()

    assert arm_scope(endpoint) == scope
    assert preflight(Recording(), "recording", arm_scope(endpoint)) is None
    assert asked == [scope]

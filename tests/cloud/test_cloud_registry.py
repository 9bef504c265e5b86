"""One registry: each adapter loaded once, one error policy, every rule asked of the cloud.

`Clouds` (cloudguard.cloud.adapter_registry) is the only loader of adapters; what
callers hold is a `Cloud`, whose answers for an adapter that cannot load, or
that does not state a rule, are the strictest ones.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from importlib.metadata import EntryPoint

import kernel_fake_adapters as fakes
import pytest

from cloudguard.cloud.adapter import CloudAdapter
from cloudguard.cloud.adapter_registry import ENTRY_POINT_GROUP, Clouds, installed_clouds
from cloudguard.cloud.cloud import UnknownCredentialError
from cloudguard.cloud.reaping import DESTRUCTIVE, REVERSIBLE, ReaperUnavailable
from cloudguard.cloud.records import Resource, SweepRequest
from cloudguard.settings.core_options import OptionClash, every_option


def entry(name: str, cls: str) -> EntryPoint:
    return EntryPoint(name=name, value=f"kernel_fake_adapters:{cls}", group=ENTRY_POINT_GROUP)


def resource(provider: str, tags: dict[str, str]) -> Resource:
    return Resource(
        provider=provider, account="acct-1", region="r", group="g", id="ID-1", name="n",
        kind="vm", size="s", power_state="running", created=datetime.now(UTC), tags=tags,
    )  # fmt: skip


def test_each_adapter_is_loaded_once_however_many_ask_at_once() -> None:
    fakes.MADE.clear()
    clouds = Clouds({"counting": entry("counting", "Counting")})
    threads = [threading.Thread(target=clouds.cloud, args=("counting",)) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    clouds.cloud("counting").sweep(SweepRequest())
    assert fakes.MADE == ["counting"], f"loaded {len(fakes.MADE)} times"


def test_an_adapter_that_cannot_load_fails_every_side_with_one_reason() -> None:
    cloud = Clouds({"broken": entry("broken", "Unloadable")}).cloud("broken")
    why = "cannot load kernel_fake_adapters:Unloadable: RuntimeError('its SDK is broken')"
    (failure,) = cloud.sweep(SweepRequest()).failures
    assert (failure.source, failure.reason) == ("provider broken", why)
    with pytest.raises(ReaperUnavailable, match="provider broken: cannot load"):
        cloud.reaper(SweepRequest())
    cloud.check_credential("anything")  # not judged here: its sweep says why it did not run


def test_a_provider_not_installed_is_a_cloud_that_says_so() -> None:
    cloud = Clouds({"azure-ish": entry("azure-ish", "SweepOnly")}).cloud("gcp")
    assert cloud.unavailable == "not installed (installed: azure-ish)"
    with pytest.raises(ReaperUnavailable, match="provider gcp: not installed"):
        cloud.reaper(SweepRequest())


def test_a_rule_the_adapter_does_not_state_gets_the_strictest_answer() -> None:
    cloud = Clouds({"sweep-only": entry("sweep-only", "SweepOnly")}).cloud("sweep-only")
    assert cloud.tag({"Task-Id": "t"}, "task-id") is None  # names compared exactly
    assert cloud.id_key("ID-1") == "ID-1"
    assert not cloud.ids_never_reused and not cloud.billable_power_states
    assert cloud.action_for("vm", REVERSIBLE) is None and cloud.actions("vm") == frozenset()
    assert cloud.is_destructive("vm", "terminate")  # a destructive verb stays destructive
    assert cloud.export_parsers == () and cloud.options == ()
    assert cloud.scope_of(resource("sweep-only", {})) == "acct-1"
    with pytest.raises(ReaperUnavailable, match="cannot reap"):
        cloud.reaper(SweepRequest())


def test_a_rule_the_adapter_states_is_its_answer() -> None:
    azure = installed_clouds().cloud("azure")
    assert azure.tag({"Task-Id": "t"}, "task-id") == "t"
    assert azure.action_for("vm", DESTRUCTIVE) == "delete" and not azure.ids_never_reused
    aws = installed_clouds().cloud("aws")
    assert aws.tag({"Task-Id": "t"}, "task-id") is None and aws.ids_never_reused
    with pytest.raises(UnknownCredentialError, match="unknown credential 'kerberos'"):
        azure.check_credential("kerberos")
    aws.check_credential("any-profile-name")  # free-form names: boto3 judges them


def test_a_resource_compares_its_tag_names_as_its_cloud_does() -> None:
    assert resource("azure", {"Task-Id": "t"}).tag("task-id") == "t"
    assert resource("aws", {"Task-Id": "t"}).tag("task-id") is None
    assert resource("no-such-cloud", {"Task-Id": "t"}).tag("task-id") is None


def _contract() -> set[str]:
    members = set(CloudAdapter.__annotations__)
    members |= {n for n, v in vars(CloudAdapter).items() if callable(v) and not n.startswith("_")}
    return members


@pytest.mark.parametrize("name", ["azure", "aws", "toy"])
def test_every_installed_adapter_implements_the_whole_contract(name: str) -> None:
    adapter = installed_clouds().cloud(name).adapter
    assert adapter is not None, f"{name} did not load"
    missing = sorted(m for m in _contract() if not hasattr(adapter, m))
    assert not missing, f"{name} lacks {missing}"


def test_control_the_contract_check_sees_a_missing_member() -> None:
    assert {"credential_names", "options", "check_options", "reaper"} <= _contract()
    adapter = Clouds({"s": entry("s", "SweepOnly")}).cloud("s").adapter
    assert "options" in {m for m in _contract() if not hasattr(adapter, m)}


def test_an_option_declared_twice_is_refused_naming_both_owners() -> None:
    with pytest.raises(OptionClash, match="option zone is declared twice: by zone-a and by zone-b"):
        every_option(
            Clouds({"zone-a": entry("zone-a", "Zone"), "zone-b": entry("zone-b", "ZoneAgain")})
        )
    with pytest.raises(
        OptionClash, match="option retries is declared twice: by core and by retries-too"
    ):
        every_option(Clouds({"retries-too": entry("retries-too", "RetriesToo")}))
    every_option(Clouds({"zone-a": entry("zone-a", "Zone")}))  # the control: one owner is fine

"""Classification and cost as pure functions: resource + evidence -> finding."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from named_checks import broken

from cloudguard.audit.classify import classify
from cloudguard.audit.cost import bundled_prices, estimate
from cloudguard.audit.evidence.interface import Evidence, GenerationCheck, GenerationStatus
from cloudguard.cloud.records import Resource
from cloudguard.documents.findings import AuditPolicy

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
COMMIT = GenerationCheck(GenerationStatus.COMMIT, "commit")
MISSING = GenerationCheck(GenerationStatus.NOT_A_COMMIT, "no such commit")
SHALLOW = GenerationCheck(GenerationStatus.UNVERIFIABLE, "not in this shallow clone")


def vm(
    *,
    tags: dict[str, str],
    provider: str = "azure",
    size: str = "Standard_D4as_v6",
    power: str = "running",
    age: timedelta | None = timedelta(days=1),
) -> Resource:
    return Resource(
        provider=provider,
        account="sub",
        region="eastus",
        group="pilot",
        id="id",
        name="vm",
        kind="vm",
        size=size,
        power_state=power,
        created=NOW - age if age is not None else None,
        tags=tags,
    )


def verdict(resource: Resource, evidence: Evidence, policy: AuditPolicy | None = None):
    finding = classify(resource, evidence, policy or AuditPolicy(), bundled_prices(), NOW)
    assert finding is not None
    return finding.verdict, finding.reasons


FULL = Evidence(
    controller_tasks=frozenset({"known", "fixture"}),
    fixture_ids=frozenset({"fixture", "lost-fixture"}),
    generations={"good": COMMIT, "bad": MISSING, "shallow": SHALLOW},
)


@pytest.mark.parametrize(
    ("tags", "age", "expected"),
    [
        ({"task-id": "known", "repository-generation": "good"}, None, ("ok", ())),
        (
            {"task-id": "known", "repository-generation": "shallow"},
            None,
            ("ok", ("unverifiable-generation",)),
        ),
        (
            {"task-id": "fixture", "repository-generation": "good"},
            None,
            ("suspect", ("fixture-task-id",)),
        ),
        (
            {"task-id": "known", "repository-generation": "bad"},
            None,
            ("suspect", ("unknown-generation",)),
        ),
        (
            {"task-id": "known"},
            None,
            ("suspect", ("unknown-generation",)),
        ),
        (
            {"task-id": "lost", "repository-generation": "good"},
            None,
            ("orphan", ("no-controller-record",)),
        ),
        (
            {"task-id": "lost", "repository-generation": "good"},
            timedelta(minutes=5),
            ("pending", ("no-controller-record",)),
        ),
        (
            {"task-id": "lost-fixture", "repository-generation": "bad"},
            timedelta(minutes=5),
            ("orphan", ("no-controller-record", "fixture-task-id", "unknown-generation")),
        ),
    ],
)
def test_verdicts_and_reasons(tags, age, expected):
    assert verdict(vm(tags=tags, age=age or timedelta(days=1)), FULL) == expected


def test_unknown_age_without_record_is_an_orphan_not_pending():
    assert (
        verdict(vm(tags={"task-id": "lost", "repository-generation": "good"}, age=None), FULL)[0]
        == "orphan"
    )


def test_evidence_not_supplied_is_never_ok():
    finding = classify(
        vm(tags={"task-id": "known"}), Evidence(), AuditPolicy(), bundled_prices(), NOW
    )
    assert finding is not None
    assert finding.verdict == "unverified"
    checks = finding.checks
    assert (checks.controller_record, checks.fixture_id, checks.generation) == (
        "not-checked",
        "not-checked",
        "not-checked",
    )


def test_untagged_resources_are_not_the_fleets():
    assert classify(vm(tags={"owner": "me"}), FULL, AuditPolicy(), bundled_prices(), NOW) is None


def test_azure_tag_names_are_case_insensitive_and_aws_are_not():
    tags = {"TASK-ID": "lost"}
    assert verdict(vm(tags=tags), FULL)[0] == "orphan"
    assert (
        classify(vm(tags=tags, provider="aws"), FULL, AuditPolicy(), bundled_prices(), NOW) is None
    )


def test_leaked_wins_over_everything():
    policy = AuditPolicy(leaked_by=(("run-id", "r1"),))
    assert verdict(
        vm(tags={"task-id": "known", "run-id": "r1", "repository-generation": "good"}), FULL, policy
    ) == (
        "leaked",
        ("leaked-run-tag",),
    )


@pytest.mark.parametrize(
    ("provider", "power", "billable", "note"),
    [
        ("azure", "running", True, "compute bills"),
        ("azure", "stopped", True, "still allocated"),
        ("azure", "deallocated", False, "disks still are"),
        ("aws", "stopped", False, "disks still are"),
        ("aws", "running", True, "compute bills"),
        ("aws", "terminated", False, "nothing bills"),
    ],
)
def test_billable_states(provider, power, billable, note):
    size = "m5.large" if provider == "aws" else "Standard_D4as_v6"
    cost = estimate(vm(tags={}, provider=provider, power=power, size=size), bundled_prices(), NOW)
    assert cost.billable is billable
    assert note in cost.note


def test_hourly_and_accrued_cost():
    cost = estimate(
        vm(tags={}, size="standard_d4as_v6", age=timedelta(hours=10)), bundled_prices(), NOW
    )
    assert cost.hourly == pytest.approx(0.172)
    assert cost.accrued == pytest.approx(1.72)
    assert cost.currency == "USD"


def test_unknown_sizes_say_unknown():
    cost = estimate(vm(tags={}, size="Standard_Imaginary_v9"), bundled_prices(), NOW)
    assert cost.billable and cost.hourly is None and cost.accrued is None
    assert "price unknown" in cost.note


@pytest.mark.parametrize(
    ("size", "tier_monthly"),
    [
        ("Premium_LRS 128 GiB", 19.71),  # P10
        ("Premium_LRS 100 GiB", 19.71),  # billed as the smallest tier that holds it: P10
        ("StandardSSD_LRS 128 GiB", 9.60),  # E10
        ("Standard_LRS 128 GiB", 5.89),  # S10
        ("Standard_LRS 8 GiB", 1.54),  # Standard HDD starts at S4
    ],
)
def test_a_managed_disk_is_priced_offline_by_its_tier_a_month_being_730_hours(
    size: str, tier_monthly: float
) -> None:
    disk = vm(tags={}, power="unknown")._replace(kind="disk", size=size)

    cost = estimate(disk, bundled_prices(), NOW)

    assert cost.billable is True and cost.hourly == pytest.approx(tier_monthly / 730), broken(
        "a-disk-priced-by-its-tier", f"{size}: {cost.hourly} per hour, {cost.note}"
    )
    assert f"disk ({size}): a managed disk bills its storage" in cost.note
    assert "offline fallback" in cost.source


@pytest.mark.parametrize("size", ["Premium_LRS", "UltraSSD_LRS 128 GiB", "PremiumV2_LRS 64 GiB"])
def test_a_disk_of_unknown_size_or_billed_otherwise_says_it_is_not_priced(size: str) -> None:
    disk = vm(tags={}, power="unknown")._replace(kind="disk", size=size)

    cost = estimate(disk, bundled_prices(), NOW)

    assert cost.billable is True and cost.hourly is None and cost.accrued is None
    assert "no hourly price known" in cost.note


def test_an_ebs_volume_is_priced_offline_per_gib_month() -> None:
    volume = vm(tags={}, power="unknown")._replace(
        provider="aws", kind="disk", size="gp3 100 GiB", region="us-east-1"
    )

    cost = estimate(volume, bundled_prices(), NOW)

    assert cost.hourly == pytest.approx(0.08 * 100 / 730)


@pytest.mark.parametrize(
    ("kind", "billable", "note"),
    [
        ("public-ip", True, "bills by the hour while it exists, attached or not"),
        ("storage-account", True, "(usage, not hours)"),
        ("resource-group", False, "bills nothing itself"),
        ("nic", False, "bills nothing by itself"),
        ("microsoft.web/sites", None, "billing of a microsoft.web/sites unknown"),
    ],
)
def test_each_kind_bills_as_its_cloud_says_and_an_unknown_kind_is_unknown_not_zero(
    kind: str, billable: bool | None, note: str
) -> None:
    resource = vm(tags={}, power="unknown")._replace(kind=kind, size="")

    cost = estimate(resource, bundled_prices(), NOW)

    assert cost.billable is billable, f"{kind}: billable {cost.billable}, expected {billable}"
    assert note in cost.note
    # A public IP is priced offline (Standard static, per hour); usage has no hourly price.
    priced = {"public-ip": 0.005, "storage-account": None}
    assert cost.hourly == (0.0 if billable is False else priced.get(kind))


def test_price_table_states_date_and_currency():
    info = bundled_prices().info
    datetime.strptime(info.as_of, "%Y-%m-%d")
    assert info.currency == "USD"
    assert bundled_prices().price("aws", "t3.micro") is not None


@pytest.mark.parametrize(
    "tags",
    [
        {"task-id": "known", "repository-generation": "good"},
        {"Task-ID": "lost", "REPOSITORY-generation": "bad"},  # Azure folds tag names
        {"task-id": "lost-fixture"},
        {"task-id": "known", "ci-run": "77", "repository-generation": "shallow"},
    ],
)
def test_the_tags_the_auditor_read_classify_as_the_tags_read_here(tags):
    """The auditor reads each resource's task id and generation once, for the evidence and
    for its classification (`tagged`): the finding is the one classify reads itself."""
    resource, policy = vm(tags=tags), AuditPolicy(leaked_by=(("ci-run", "77"),))
    prices = bundled_prices()
    tag = prices.clouds.cloud("azure").tag
    read = (tag(tags, policy.task_tag), tag(tags, policy.generation_tag))
    assert read[0] is not None
    assert classify(resource, FULL, policy, prices, NOW, tagged=read) == classify(
        resource, FULL, policy, prices, NOW
    )

"""The live Google Cloud sweep through the real clients (google-cloud-asset, google-cloud-compute,
REST) against the fake Google Cloud over HTTPS on 127.0.0.1: paging, cost in requests, the
state Compute Engine keeps, fail closed, progress per scope."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cloudguard_gcp.adapter import GcpAdapter
from cloudguard_gcp.live import scopes_of
from fake_gcp import (
    FOLDER,
    ORGANIZATION,
    Address,
    Disk,
    FakeGcp,
    GcpFaults,
    GcpWorld,
    Instance,
    Other,
    Rule,
    Snapshot,
    serve,
)
from gcp_helpers import cli, controller_home
from named_checks import broken

from cloudguard.cloud.records import SweepRequest, SweepResult

PILOT, BATCH, BUCKETS = "fleet-pilot-7c7", "fleet-batch-7c7", "fleet-buckets-7c7"
ZONE = "europe-west4-a"
VM_PREFIX = "//compute.googleapis.com/projects"


@pytest.fixture
def gcp() -> Iterator[FakeGcp]:
    with serve() as fake:
        yield fake


def sweep(fake: FakeGcp, *scopes: str, **asked: Any) -> SweepResult:
    request = SweepRequest(
        credential="fake-gcp",
        endpoint=fake.base_url,
        ca_bundle=fake.ca_pem,
        retries=asked.pop("retries", 1),
        settings={"gcp_scope": scopes},
        **asked,
    )
    return GcpAdapter().sweep(request)


def three_projects(world: GcpWorld, topics: int) -> None:
    """Two projects with Compute resources and one with buckets and topics only."""
    world.project(PILOT, "418512345678")
    world.project(BATCH, "418512345679")
    world.project(BUCKETS, "418512345680")
    world.instances.append(Instance(PILOT, ZONE, "vm-on", labels={"task-id": "t-1"}))
    world.instances.append(Instance(BATCH, ZONE, "vm-batch", labels={"task-id": "t-2"}))
    world.others += [
        Other(BUCKETS, "pubsub.googleapis.com/Topic", f"projects/{BUCKETS}/topics/t-{n:04}",
              "pubsub.googleapis.com", labels={"task-id": f"t-{n}"})
        for n in range(topics)
    ]  # fmt: skip


def test_every_page_of_a_folder_is_read_at_500_a_page(gcp: FakeGcp) -> None:
    """A folder of three projects and 1,203 resources: ceil(1,203 / 500) = 3 searches, every
    one asking for 500; Compute is listed only in the two projects holding instances."""
    three_projects(gcp.world, topics=1201)
    result = sweep(gcp, FOLDER)
    assert result.failures == ()
    searches = gcp.requests("searchAllResources")
    assert len(result.resources) == 1203, broken(
        "every-page-read", f"{len(result.resources)} of 1,203 resources read"
    )
    assert len(searches) == math.ceil(1203 / 500), broken(
        "every-page-read", f"{len(searches)} searches for 1,203 resources"
    )
    assert {s.query.get("pageSize") for s in searches} == {"500"}, broken(
        "page-size-500", f"page sizes asked: {[s.query.get('pageSize') for s in searches]}"
    )
    listed = {s.operation: 0 for s in gcp.seen if s.operation != "searchAllResources"}
    for s in gcp.seen:
        if s.operation in listed:
            listed[s.operation] += 1
    assert listed == {"instances.aggregatedList": 2}, broken(
        "compute-only-where-held", f"Compute listings: {listed}"
    )


def test_an_organization_and_a_project_under_it_read_each_resource_once(gcp: FakeGcp) -> None:
    three_projects(gcp.world, topics=3)
    result = sweep(gcp, ORGANIZATION, f"projects/{PILOT}")
    assert result.failures == ()
    ids = [r.id for r in result.resources]
    assert len(ids) == len(set(ids)) == 5


def test_compute_state_decides_power_attachment_and_use(gcp: FakeGcp) -> None:
    """The asset index still says RUNNING for an instance Compute says is TERMINATED (it
    lags): the listing wins. A disk's users and an address's status come from Compute."""
    world = gcp.world
    world.project(PILOT, "418512345678")
    world.instances += [
        Instance(PILOT, ZONE, "vm-on", labels={"task-id": "t-1"}),
        Instance(PILOT, ZONE, "vm-off", status="TERMINATED", searched_state="RUNNING",
                 labels={"task-id": "t-1"}),
    ]  # fmt: skip
    world.disks += [
        Disk(PILOT, ZONE, "vm-on", users=["vm-on"], labels={"task-id": "t-1"}),
        Disk(PILOT, ZONE, "scratch", size_gb=200, type="pd-ssd", labels={"task-id": "t-1"}),
    ]
    world.addresses += [
        Address(PILOT, "europe-west4", "ip-on", status="IN_USE", users=["vm-on"]),
        Address(PILOT, "europe-west4", "ip-held", status="RESERVED"),
    ]
    result = sweep(gcp, f"projects/{PILOT}")
    assert result.failures == ()
    found = {r.name: r for r in result.resources}
    power = {name: found[name].power_state for name in ("vm-on", "vm-off")}
    assert power == {"vm-on": "running", "vm-off": "stopped"}, broken(
        "instance-status-from-compute", f"power states {power} (Compute: RUNNING, TERMINATED)"
    )
    assert found["vm-on"].size == "n2-standard-4"  # the machine type: Compute's, not the index's
    disks = {r.name: r.size for r in result.resources if r.kind == "disk"}
    assert disks == {
        "vm-on": "pd-balanced 10 GiB, attached to vm-on",
        "scratch": "pd-ssd 200 GiB, attached to nothing",
    }, broken("disk-users-read", f"disks read as {disks}")
    addresses = {r.name: r.size for r in result.resources if r.kind == "public-ip"}
    assert addresses == {
        "ip-on": "external, in use, used by vm-on",
        "ip-held": "external, reserved, used by nothing",
    }, broken("address-status-read", f"addresses read as {addresses}")
    assert all(r.id.startswith(f"{VM_PREFIX}/{PILOT}/") for r in result.resources)


def test_snapshots_global_addresses_and_regional_disks_are_read_from_compute(
    gcp: FakeGcp,
) -> None:
    """What the asset search carries no numeric id, bytes or use for: a snapshot (its stored
    bytes, type and place, from the global list), a global address (its use, from its global
    list), a regional disk (from the disks' aggregated list), each with Compute's id."""
    world = gcp.world
    world.project(PILOT, "418512345678")
    world.snapshots += [
        Snapshot(PILOT, "snap-data", source_disk=f"zones/{ZONE}/disks/data",
                 storage_bytes=int(12.5 * 2**30), location="eu"),
        Snapshot(PILOT, "snap-cold", storage_bytes=2**31, snapshot_type="ARCHIVE",
                 location="europe-west4"),
    ]  # fmt: skip
    world.addresses.append(Address(PILOT, "global", "ip-global"))
    world.disks.append(Disk(PILOT, "", "shared", size_gb=200, region="europe-west4"))
    result = sweep(gcp, f"projects/{PILOT}")
    assert result.failures == ()
    found = {r.name: r for r in result.resources}
    read = {n: (r.id.removeprefix(f"{VM_PREFIX}/{PILOT}/"), r.region, r.size, r.uid)
            for n, r in found.items()}  # fmt: skip
    assert read == {
        "snap-data": ("global/snapshots/snap-data", "eu", "standard 12.5 GiB stored",
                      world.snapshots[0].id),
        "snap-cold": ("global/snapshots/snap-cold", "europe-west4", "archive 2 GiB stored",
                      world.snapshots[1].id),
        "ip-global": ("global/addresses/ip-global", "global",
                      "external, reserved, used by nothing", world.addresses[0].id),
        "shared": ("regions/europe-west4/disks/shared", "europe-west4",
                   "pd-balanced 200 GiB, attached to nothing", world.disks[0].id),
    }, broken("global-listings-read", f"read as {read}")  # fmt: skip
    assert (gcp.counts["snapshots.list"], gcp.counts["globalAddresses.list"]) == (1, 1)
    assert gcp.counts["addresses.aggregatedList"] == 0  # no regional address: not listed


def test_a_global_listing_that_fails_leaves_its_project_unread(gcp: FakeGcp) -> None:
    gcp.world.project(PILOT, "418512345678")
    gcp.world.instances.append(Instance(PILOT, ZONE, "vm-pilot"))
    gcp.world.snapshots.append(Snapshot(PILOT, "snap-data"))
    gcp.faults.rules.append(Rule(f"projects/{PILOT}/global/snapshots", 503))
    result = sweep(gcp, f"projects/{PILOT}")
    assert result.resources == ()
    ((source, reason),) = [(f.source, f.reason) for f in result.failures]
    assert source == f"gcp project {PILOT}"
    assert "HTTP 503" in reason and "(while reading snapshots.list)" in reason, reason


def test_kind_narrows_the_compute_listings(gcp: FakeGcp) -> None:
    gcp.world.project(PILOT, "418512345678")
    gcp.world.instances.append(Instance(PILOT, ZONE, "vm-on"))
    gcp.world.disks.append(Disk(PILOT, ZONE, "vm-on", users=["vm-on"]))
    result = sweep(gcp, f"projects/{PILOT}", kinds=("disk",))
    assert [r.name for r in result.resources] == ["vm-on"]
    assert result.resources[0].kind == "disk"
    assert gcp.counts["instances.aggregatedList"] == 0
    assert gcp.counts["disks.aggregatedList"] == 1


FAILURES = {
    # id: (faults, the failed source, what its reason says)
    "scope-denied-403": (
        GcpFaults(denied_scopes={f"projects/{BATCH}"}),
        f"gcp scope projects/{BATCH}",
        "HTTP 403",
    ),
    "second-page-500": (
        GcpFaults(rules=[Rule(rf"{BATCH}:searchAllResources\?.*pageToken=\w", 500)], search_page=2),
        f"gcp scope projects/{BATCH}",
        "HTTP 500",
    ),
    "throttled-429": (
        GcpFaults(rules=[Rule(f"projects/{BATCH}:searchAllResources", 429)]),
        f"gcp scope projects/{BATCH}",
        "HTTP 429",
    ),
    "compute-denied-403": (
        GcpFaults(denied_projects={BATCH}),
        f"gcp project {BATCH}",
        "HTTP 403",
    ),
    "compute-503": (
        GcpFaults(rules=[Rule(f"projects/{BATCH}/aggregated/instances", 503)]),
        f"gcp project {BATCH}",
        "HTTP 503",
    ),
    "zone-unreachable": (
        GcpFaults(unreachable={BATCH: ["zones/europe-west4-b"]}),
        f"gcp project {BATCH}",
        "could not read zones/europe-west4-b",
    ),
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_a_read_that_fails_is_did_not_run_and_nothing_of_it_is_reported(case: str) -> None:
    """Fail closed: a denied scope, a page that still fails, throttling past the budget, a
    Compute listing denied, failing or incomplete: the scope or project is named unread,
    none of its resources is reported (never a partial clean), the others are."""
    faults, source, reason = FAILURES[case]
    world = GcpWorld()
    world.project(PILOT, "418512345678")
    world.project(BATCH, "418512345679")
    world.instances.append(Instance(PILOT, ZONE, "vm-pilot", labels={"task-id": "t-1"}))
    world.instances += [
        Instance(BATCH, ZONE, f"vm-{n}", labels={"task-id": "t-2"}) for n in range(3)
    ]
    with serve(world, faults) as fake:
        result = sweep(fake, f"projects/{PILOT}", f"projects/{BATCH}")
    named = {f.source: f.reason for f in result.failures}
    assert source in named and reason in named[source], broken(
        "failed-read-did-not-run", f"{case}: failures {named}"
    )
    accounts = {r.account for r in result.resources}
    assert accounts == {PILOT}, broken(
        "failed-read-did-not-run", f"{case}: resources of {accounts} reported"
    )


def test_throttling_once_is_retried_and_the_scope_read_whole(gcp: FakeGcp) -> None:
    three_projects(gcp.world, topics=3)
    gcp.faults.rules.append(Rule(":searchAllResources", 429, times=1))
    result = sweep(gcp, f"projects/{BUCKETS}", retries=2)
    assert result.failures == () and len(result.resources) == 3, broken(
        "transient-retried", f"failures {result.failures}"
    )
    assert gcp.counts["searchAllResources"] == 2


def test_a_throttled_page_waits_what_retry_after_asks(gcp: FakeGcp) -> None:
    """Google's 429 says `Retry-After: 1`: the page is asked again no sooner (the backoff
    alone waits at most 0.5 s first), on the same budget of retries."""
    three_projects(gcp.world, topics=3)
    sweep(gcp, f"projects/{BUCKETS}")  # warm: imports and clients are not the wait measured
    gcp.faults.rules.append(Rule(":searchAllResources", 429, times=1, retry_after=1))
    started = time.monotonic()
    result = sweep(gcp, f"projects/{BUCKETS}", retries=1)
    waited = time.monotonic() - started
    assert result.failures == () and len(result.resources) == 3, result.failures
    assert waited >= 1.0, broken(
        "retry-after-obeyed", f"the sweep took {waited:.2f} s through a 429 of Retry-After: 1"
    )
    assert gcp.counts["searchAllResources"] == 1 + 2  # the warm sweep's, the 429, the retry


def test_each_scope_and_project_is_told_as_it_is_read(gcp: FakeGcp) -> None:
    three_projects(gcp.world, topics=3)
    told: list[tuple[str, str]] = []
    sweep(
        gcp, f"projects/{PILOT}", f"projects/{BUCKETS}", progress=lambda s, w: told.append((s, w))
    )
    said = {scope for scope, what in told if what == "reading"}
    assert said == {
        f"gcp scope projects/{PILOT}",
        f"gcp scope projects/{BUCKETS}",
        f"gcp project {PILOT} (compute)",
    }
    ends = [what for scope, what in told if scope == f"gcp scope projects/{BUCKETS}"]
    assert ends[-1].startswith("3 resources"), ends


def test_a_sweep_without_a_scope_did_not_run() -> None:
    result = GcpAdapter().sweep(SweepRequest(credential="fake-gcp", endpoint="https://127.0.0.1:9"))
    assert result.resources == () and "no scope to sweep" in result.failures[0].reason


def test_a_subscription_is_a_project_scope_and_a_scope_is_read_once() -> None:
    request = SweepRequest(
        subscriptions=(PILOT,), settings={"gcp_scope": (f"projects/{PILOT}", FOLDER)}
    )
    assert scopes_of(request) == [f"projects/{PILOT}", FOLDER]


@pytest.mark.parametrize("bad", ["project/p-1", "folders/engineering", "projects/", "p-1"])
def test_a_scope_that_is_no_scope_is_a_usage_error(bad: str) -> None:
    done = cli("--provider", "gcp", "--gcp-scope", bad)
    assert done.exit_code == 2, done.stdout + done.stderr
    assert "is not a scope" in done.stdout + done.stderr


def test_a_denied_scope_makes_the_audit_did_not_run_75_naming_it(tmp_path: Path) -> None:
    """The command line's verdict: one scope read, one denied: 75 (never 0 or 1), the
    denied scope named."""
    world = GcpWorld()
    world.project(PILOT, "418512345678")
    world.instances.append(Instance(PILOT, ZONE, "vm-pilot", labels={"task-id": "t-1"}))
    with serve(world, GcpFaults(denied_scopes={FOLDER})) as fake:
        done = cli(
            "--provider", "gcp", "--gcp-scope", f"projects/{PILOT}", "--gcp-scope", FOLDER,
            "--credential", "fake-gcp", "--management-endpoint", fake.base_url,
            "--ca-bundle", fake.ca_pem,
            "--controller-home", str(controller_home(tmp_path / "controller")),
        )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.exit_code == 75, broken("denied-scope-exit-75", f"exit {done.exit_code}: {out}")
    assert f"gcp scope {FOLDER}" in out and "HTTP 403" in out, out

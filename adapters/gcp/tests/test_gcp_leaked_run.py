"""What a test run left on Google Cloud, found whole by `--leaked-by`, priced, planned and
reaped: the real google-cloud-* clients against the fake Google Cloud (and the fake Billing
Catalog) on 127.0.0.1, through the CLI.

Every kind with one clear delete (an instance, disks zonal and regional, a snapshot,
addresses regional and global) is deleted, each by its numeric id; what cloudguard does not
reap (a bucket, a topic) is listed with the command a person would run; nothing but the
run's resources is ever acted on, and a change made since the plan is never a wrong action.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_billing import FakeBilling, sku
from fake_billing import serve as serve_billing
from fake_gcp import Snapshot, serve
from gcp_leaked_run import BUCKET, RUN, TOPIC, GcpLeakedRun, leaked_run
from gcp_reaping import PROJECT, ZONE, Fleet, events, make_fleet, skip_codes
from named_checks import broken

LEAKED_BY = ("--leaked-by", f"ci-run={RUN}")
DELETE_ALL = ("--verdict", "leaked", "--action", "delete", "--delete-data", "disk,snapshot")
# Europe's rates, as the catalog lists them (europe-west4 is one of EMEA's regions).
EMEA_SKUS = [
    sku("N2 Instance Core running in EMEA", 0.034773, place="EMEA"),
    sku("N2 Instance Ram running in EMEA", 0.004661, place="EMEA", unit="GiBy.h", group="RAM"),
    sku("Balanced PD Capacity", 0.11, place="EMEA", unit="GiBy.mo", family="Storage",
        group="SSD"),
    sku("SSD backed PD Capacity", 0.187, place="EMEA", unit="GiBy.mo", family="Storage",
        group="SSD"),
    sku("Regional Balanced PD Capacity", 0.22, place="EMEA", unit="GiBy.mo", family="Storage",
        group="SSD"),
    sku("Storage PD Snapshot in Europe", 0.065, regions=["europe"], unit="GiBy.mo",
        family="Storage", group="PDSnapshot"),
    sku("Static Ip Charge", 0.01, place="EMEA", free=1, family="Network", group="IpAddress"),
]  # fmt: skip


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Fleet]:
    with serve() as gcp:
        yield make_fleet(gcp, tmp_path, monkeypatch)


@pytest.fixture
def run(fleet: Fleet) -> GcpLeakedRun:
    return leaked_run(fleet.gcp)


@pytest.fixture
def billing(tmp_path: Path, fleet: Fleet) -> Iterator[FakeBilling]:
    with serve_billing(tmp_path) as fake:
        fake.skus = list(EMEA_SKUS)
        yield fake


def findings(fleet: Fleet, *extra: str) -> dict[str, dict[str, Any]]:
    report = fleet.audit(*LEAKED_BY, *extra)
    return {f["resource"]["id"]: f for f in report["findings"]}


def test_leaked_by_finds_everything_the_run_left_whole(fleet: Fleet, run: GcpLeakedRun) -> None:
    found = findings(fleet)
    leaked = {i: f["resource"]["kind"] for i, f in found.items() if f["verdict"] == "leaked"}
    assert leaked == run.kinds, broken(
        "leaked-run-found-whole", f"missed {set(run.kinds) - set(leaked)}, more {leaked}"
    )
    # Compute's numeric id of each is read (the reap binds to it); the bucket and topic have
    # none from the search, nor need one.
    ids = {f["resource"]["uid"] for i, f in found.items() if i in leaked and f["resource"]["uid"]}
    assert ids >= run.compute_ids, f"ids read {ids}"


def test_the_run_is_priced_from_the_billing_catalog(
    fleet: Fleet, run: GcpLeakedRun, billing: FakeBilling, tmp_path: Path
) -> None:
    both = tmp_path / "both-ca.pem"  # one --ca-bundle trusts the two fakes
    both.write_text(Path(fleet.gcp.ca_pem).read_text() + Path(billing.ca_bundle).read_text())
    found = findings(fleet, "--billing-catalog-endpoint", billing.url, "--ca-bundle", str(both))
    hourly = {f["resource"]["name"]: f["cost"]["hourly"] for f in found.values()
              if f["verdict"] == "leaked" and f["cost"]["hourly"] is not None}  # fmt: skip
    n2_standard_4 = 4 * 0.034773 + 16 * 0.004661
    assert hourly["vm-run"] == pytest.approx(n2_standard_4), hourly
    assert hourly["vm-run-data"] == pytest.approx(500 * 0.11 / 730), hourly
    assert hourly["scratch-run"] == pytest.approx(100 * 0.187 / 730), hourly
    assert hourly["shared-run"] == pytest.approx(200 * 0.22 / 730), broken(
        "regional-disk-regional-rate", f"the regional disk priced {hourly.get('shared-run')}"
    )
    assert hourly["snap-run"] == pytest.approx(40 * 0.065 / 730), hourly  # stored in `eu`
    assert hourly["ip-run"] == pytest.approx(0.01), hourly  # reserved, used by nothing
    # What the catalog does not price is unknown, never zero: the boot disk (10 GiB, priced)
    # aside, the global address, the bucket and the topic.
    unknown = {f["resource"]["name"] for f in found.values() if f["cost"]["hourly"] is None}
    assert unknown == {"ip-run-global", BUCKET, TOPIC}, unknown
    assert billing.requests, "the catalog was not read"


def plan_all(fleet: Fleet) -> tuple[Path, dict[str, Any]]:
    plan = fleet.plan(*DELETE_ALL, audit=LEAKED_BY)
    return plan, json.loads(plan.read_text())


def test_every_kind_with_one_clear_delete_is_reaped_and_the_rest_is_said(
    fleet: Fleet, run: GcpLeakedRun
) -> None:
    plan, document = plan_all(fleet)
    planned = {(i["kind"], i["action"]) for i in document["items"]}
    assert planned == {("vm", "delete"), ("disk", "delete"), ("snapshot", "delete"),
                       ("public-ip", "delete")}, planned  # fmt: skip
    said = {n["id"]: n["why"] for n in document["not_planned"]}
    assert (
        "`gcloud storage buckets delete gs://bucket-ci-run-77`; it holds data"
        in said[f"//storage.googleapis.com/{BUCKET}"]
    ), said
    # A kind no command is known for says so (it once said "run `None`").
    topic = said[f"//pubsub.googleapis.com/projects/{PROJECT}/topics/{TOPIC}"]
    assert topic == (
        "not reaped by cloudguard (a gcp pubsub.googleapis.com/topic): cloudguard knows no "
        "command that deletes it"
    ), broken("no-command-said-so", f"said {topic!r}")

    code, out, records = fleet.apply(plan, "--yes", *LEAKED_BY)

    assert code == 0, out
    acted = {a[3] for a in fleet.gcp.actions}
    assert acted == run.compute_ids, broken(
        "only-the-run-acted-on", f"acted on {fleet.gcp.actions}"
    )
    world = fleet.gcp.world
    left = [i.name for i in world.instances] + [d.name for d in world.disks] + \
        [a.name for a in world.addresses] + [s.name for s in world.snapshots]  # fmt: skip
    assert sorted(left) == ["vm-healthy", "vm-orphan"], left
    done = [e["kind"] for e in records if e["event"] == "done"]
    assert done[0] == "vm", done  # the instance first: its disks are free once it is gone
    # The boot disk went with its instance (autoDelete): gone when its turn came.
    assert "gone" in skip_codes(records), records
    waits = {k: v for k, v in fleet.gcp.counts.items() if k.endswith("Operations.wait")}
    assert set(waits) == {"zoneOperations.wait", "regionOperations.wait",
                          "globalOperations.wait"}, waits  # fmt: skip


def test_a_snapshot_re_created_between_the_read_and_the_delete_is_not_deleted(
    fleet: Fleet, run: GcpLeakedRun
) -> None:
    """The window no read can close: the delete names the reviewed snapshot's id, which one
    made again under its name does not have (404); a delete by name would delete it."""
    plan, _ = plan_all(fleet)
    world = fleet.gcp.world
    again = Snapshot(PROJECT, run.snapshot.name, labels=dict(run.snapshot.labels))

    def re_create_before_the_delete(operation: str) -> None:
        if operation == "snapshots.delete" and run.snapshot in world.snapshots:
            world.snapshots.remove(run.snapshot)
            world.snapshots.append(again)

    fleet.gcp.before = re_create_before_the_delete
    code, out, records = fleet.apply(plan, "--yes", *LEAKED_BY)

    assert again in world.snapshots, broken(
        "bound-to-the-reviewed-id", f"the re-created snapshot was deleted: {fleet.gcp.actions}"
    )
    (failed,) = [e for e in records if e["event"] == "failed"]
    assert failed["kind"] == "snapshot" and "HTTP 404" in failed["detail"], failed
    assert code == 1, out


def test_addresses_and_a_regional_disk_in_use_since_the_plan_are_kept(
    fleet: Fleet, run: GcpLeakedRun
) -> None:
    plan, _ = plan_all(fleet)
    regional, global_ = run.addresses
    for address in run.addresses:
        address.status, address.users = "IN_USE", ["vm-healthy"]
    shared = run.disks[3]
    shared.users.append("vm-healthy")

    code, out, records = fleet.apply(plan, "--yes", *LEAKED_BY)

    kept = {regional.id, global_.id, shared.id}
    attached = [e["id"] for e in records if e["event"] == "skipped"
                for s in e["skips"] if s["code"] == "attached"]  # fmt: skip
    assert len(attached) == 3, broken("attachment-re-read", f"skipped as attached: {attached}")
    assert not kept & {a[3] for a in fleet.gcp.actions}, f"sent a delete: {fleet.gcp.actions}"
    assert "failed" not in events(records) and code == 0, out


def test_a_second_apply_of_the_runs_plan_acts_on_nothing(fleet: Fleet, run: GcpLeakedRun) -> None:
    plan, _ = plan_all(fleet)
    code, out, _ = fleet.apply(plan, "--yes", *LEAKED_BY)
    assert code == 0, out
    first = list(fleet.gcp.actions)

    code, out, records = fleet.apply(plan, "--yes", *LEAKED_BY)

    assert fleet.gcp.actions == first, f"acted again: {fleet.gcp.actions[len(first) :]}"
    assert "intent" not in events(records) and code == 0, records


def test_the_runs_resources_are_read_and_acted_on_by_id_in_their_own_place(
    fleet: Fleet, run: GcpLeakedRun
) -> None:
    """Each delete is the right API's: the regional disk's regionDisks, the global
    address's globalAddresses, the snapshot's snapshots (a zonal route would be a 404)."""
    plan, _ = plan_all(fleet)
    fleet.apply(plan, "--yes", *LEAKED_BY)
    counts = fleet.gcp.counts
    sent = {k: counts[k] for k in ("regionDisks.delete", "globalAddresses.delete",
                                   "snapshots.delete", "addresses.delete")}  # fmt: skip
    assert sent == dict.fromkeys(sent, 1), sent
    assert ZONE in run.instance.zone

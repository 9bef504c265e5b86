"""A test run that provisioned Google Cloud resources and left them all behind, in the fake.

Everything labelled with the run's id (`ci-run`) and a fixture task id: an instance with its
boot disk and a data disk that outlives it (autoDelete off), a snapshot of that disk, an
unattached zonal disk, a regional disk, a regional and a global reserved address, a bucket
and a Pub/Sub topic. `--leaked-by ci-run=<RUN>` must find every one of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from fake_gcp import Address, Disk, FakeGcp, Instance, Other, Snapshot
from gcp_reaping import COMPUTE, PROJECT, REGION, ZONE

RUN = "ci-run-77"
LABELS = {"ci-run": RUN, "task-id": "cloud-noenv-c7"}
BUCKET = f"bucket-{RUN}"
TOPIC = f"topic-{RUN}"


@dataclass
class GcpLeakedRun:
    instance: Instance
    disks: list[Disk]  # boot, data (kept), scratch (zonal, unattached), shared (regional)
    snapshot: Snapshot
    addresses: list[Address]  # regional, global

    @property
    def kinds(self) -> dict[str, str]:
        """full resource name -> kind of everything the run left."""
        return {
            f"{COMPUTE}/zones/{ZONE}/instances/{self.instance.name}": "vm",
            **{f"{COMPUTE}/{d.place}/disks/{d.name}": "disk" for d in self.disks},
            f"{COMPUTE}/global/snapshots/{self.snapshot.name}": "snapshot",
            **{f"{COMPUTE}/{a.place}/addresses/{a.name}": "public-ip" for a in self.addresses},
            f"//storage.googleapis.com/{BUCKET}": "bucket",
            f"//pubsub.googleapis.com/projects/{PROJECT}/topics/{TOPIC}": (
                "pubsub.googleapis.com/topic"
            ),
        }

    @property
    def compute_ids(self) -> set[str]:
        """The numeric ids of what Compute Engine holds of the run (all but the boot disk,
        which its instance's delete takes with it)."""
        return {
            self.instance.id,
            *(d.id for d in self.disks[1:]),
            self.snapshot.id,
            *(a.id for a in self.addresses),
        }


def leaked_run(gcp: FakeGcp) -> GcpLeakedRun:
    world = gcp.world
    instance = Instance(PROJECT, ZONE, "vm-run", labels=dict(LABELS), kept_disks=["vm-run-data"])
    disks = [
        Disk(PROJECT, ZONE, "vm-run", users=["vm-run"], labels=dict(LABELS)),
        Disk(PROJECT, ZONE, "vm-run-data", users=["vm-run"], size_gb=500, labels=dict(LABELS)),
        Disk(PROJECT, ZONE, "scratch-run", size_gb=100, type="pd-ssd", labels=dict(LABELS)),
        Disk(PROJECT, "", "shared-run", size_gb=200, region=REGION, labels=dict(LABELS)),
    ]
    snapshot = Snapshot(
        PROJECT, "snap-run", source_disk=f"zones/{ZONE}/disks/vm-run-data",
        storage_bytes=40 * 2**30, location="eu", labels=dict(LABELS),
    )  # fmt: skip
    addresses = [
        Address(PROJECT, REGION, "ip-run", labels=dict(LABELS)),
        Address(PROJECT, "global", "ip-run-global", ip="203.0.113.9", labels=dict(LABELS)),
    ]
    world.instances.append(instance)
    world.disks += disks
    world.snapshots.append(snapshot)
    world.addresses += addresses
    world.others += [
        Other(PROJECT, "storage.googleapis.com/Bucket", BUCKET, "storage.googleapis.com",
              location="eu", labels=dict(LABELS)),
        Other(PROJECT, "pubsub.googleapis.com/Topic", f"projects/{PROJECT}/topics/{TOPIC}",
              "pubsub.googleapis.com", location="global", labels=dict(LABELS)),
    ]  # fmt: skip
    return GcpLeakedRun(instance, disks, snapshot, addresses)

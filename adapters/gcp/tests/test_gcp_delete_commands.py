"""The gcloud command a GCP plan lists for each resource cloudguard does not reap (issue 35),
and none for a name that could carry shell text."""

from __future__ import annotations

from cloudguard_gcp.adapter import GcpAdapter
from named_checks import broken

from cloudguard.cloud import kinds
from cloudguard.cloud.records import Resource

P = "fleet-ci"
COMPUTE = f"//compute.googleapis.com/projects/{P}"


def resource(rid: str, kind: str) -> Resource:
    return Resource("gcp", P, "", "", rid, rid.rsplit("/", 1)[-1], kind, "", "unknown", None)


def command(rid: str, kind: str) -> str | None:
    return GcpAdapter().delete_command(resource(rid, kind))


def test_each_kind_gets_the_gcloud_command_with_its_zone_region_and_project() -> None:
    expected = {
        (f"{COMPUTE}/zones/europe-west1-b/instances/ci-7", kinds.VM): (
            f"gcloud compute instances delete ci-7 --zone=europe-west1-b --project={P}"
        ),
        (f"{COMPUTE}/zones/europe-west1-b/disks/ci-7-data", kinds.DISK): (
            f"gcloud compute disks delete ci-7-data --zone=europe-west1-b --project={P}"
        ),
        (f"{COMPUTE}/regions/europe-west1/disks/ci-7-rd", kinds.DISK): (
            f"gcloud compute disks delete ci-7-rd --region=europe-west1 --project={P}"
        ),
        (f"{COMPUTE}/regions/europe-west1/addresses/ci-7-ip", kinds.PUBLIC_IP): (
            f"gcloud compute addresses delete ci-7-ip --region=europe-west1 --project={P}"
        ),
        (f"{COMPUTE}/global/addresses/ci-lb-ip", kinds.PUBLIC_IP): (
            f"gcloud compute addresses delete ci-lb-ip --global --project={P}"
        ),
        (f"{COMPUTE}/global/snapshots/ci-7-snap", kinds.SNAPSHOT): (
            f"gcloud compute snapshots delete ci-7-snap --project={P}"
        ),
        (f"{COMPUTE}/global/firewalls/ci-allow", kinds.SECURITY_GROUP): (
            f"gcloud compute firewall-rules delete ci-allow --project={P}"
        ),
        (
            f"//container.googleapis.com/projects/{P}/locations/europe-west1/clusters/ci-gke",
            kinds.KUBERNETES_CLUSTER,
        ): f"gcloud container clusters delete ci-gke --location=europe-west1 --project={P}",
        (f"//cloudsql.googleapis.com/projects/{P}/instances/ci-db", kinds.DATABASE): (
            f"gcloud sql instances delete ci-db --project={P}"
        ),
        ("//storage.googleapis.com/ci-artifacts-7", kinds.BUCKET): (
            "gcloud storage buckets delete gs://ci-artifacts-7"
        ),
    }
    for (rid, kind), want in expected.items():
        got = command(rid, kind)
        assert got == want, broken("gcloud-command-per-kind", f"{rid}: {got!r}, want {want!r}")


def test_no_command_for_a_name_that_could_carry_shell_text() -> None:
    hostile = [
        (f"{COMPUTE}/zones/europe-west1-b/instances/x;rm -rf ~", kinds.VM),
        (f"{COMPUTE}/zones/$(id)/disks/d", kinds.DISK),
        ("//compute.googleapis.com/projects/p`x`/global/snapshots/s", kinds.SNAPSHOT),
        ("//storage.googleapis.com/b&&curl", kinds.BUCKET),
    ]
    for rid, kind in hostile:
        got = command(rid, kind)
        assert got is None, broken("no-command-for-shell-text", f"{rid}: {got!r}")


def test_no_command_for_a_kind_it_does_not_know() -> None:
    got = command(
        "//pubsub.googleapis.com/projects/fleet-ci/topics/t", "pubsub.googleapis.com/topic"
    )
    assert got is None, broken("unknown-kind-no-command", repr(got))

"""The `gcloud` command a person would run to delete a resource cloudguard does not reap.

A kind the GCP reaper does not act on (cloudguard_gcp.reaper; issue 35) is listed in
the plan, never acted on: the plan says what to run instead. The command is built from the
resource's full resource name (`//compute.googleapis.com/projects/P/zones/Z/
instances/N`), which names its project and zone or region; a kind without a
known command, or a name that does not parse, gets none (the plan says so).

Every part placed in the command must look like a Google resource name, project,
zone or region: a name from an export could hold shell text (`; rm -rf ~`), and
the command is meant to be pasted. Stdlib only.
"""

from __future__ import annotations

import re

from cloudguard.cloud import kinds
from cloudguard.cloud.records import Resource

# Google's names: lower-case letters, digits, `-` (and `_`, `.` in bucket names); never
# a space, quote or shell metacharacter.
_SAFE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,221}$")
_COMPUTE = re.compile(
    r"^//compute\.googleapis\.com/projects/(?P<project>[^/]+)"
    r"(?:/(?P<scope>zones|regions|global))?(?:/(?P<where>[^/]+))?/(?P<type>[A-Za-z]+)/(?P<name>[^/]+)$"
)
_GKE = re.compile(
    r"^//container\.googleapis\.com/projects/(?P<project>[^/]+)/(?:locations|zones)/"
    r"(?P<where>[^/]+)/clusters/(?P<name>[^/]+)$"
)
_SQL = re.compile(
    r"^//(?:cloudsql|sqladmin)\.googleapis\.com/projects/(?P<project>[^/]+)/instances/(?P<name>[^/]+)$"
)
_BUCKET = re.compile(r"^//storage\.googleapis\.com/(?:projects/_/buckets/)?(?P<name>[^/]+)$")

# Compute Engine's collection -> gcloud's group, and whether it is zonal/regional or global.
_COMPUTE_GROUPS = {
    "instances": "instances",
    "disks": "disks",
    "addresses": "addresses",
    "snapshots": "snapshots",
    "firewalls": "firewall-rules",
    "networks": "networks",
    "instanceGroupManagers": "instance-groups managed",
}


def delete_command(resource: Resource) -> str | None:
    """`gcloud ... delete NAME --zone=Z --project=P` for `resource`, or None."""
    rid = resource.id
    if (found := _COMPUTE.match(rid)) is not None:
        return _compute(found)
    if resource.kind == kinds.KUBERNETES_CLUSTER and (found := _GKE.match(rid)) is not None:
        return _joined(
            "gcloud container clusters delete",
            found["name"],
            f"--location={found['where']}",
            f"--project={found['project']}",
        )
    if resource.kind == kinds.DATABASE and (found := _SQL.match(rid)) is not None:
        return _joined(
            "gcloud sql instances delete", found["name"], f"--project={found['project']}"
        )
    if resource.kind == kinds.BUCKET and (found := _BUCKET.match(rid)) is not None:
        # Refused by Google while the bucket holds objects (as `aws s3 rb` is): the plan's
        # note says to empty it deliberately; the command itself deletes no data.
        return _joined("gcloud storage buckets delete", f"gs://{found['name']}")
    return None


def _compute(found: re.Match[str]) -> str | None:
    group = _COMPUTE_GROUPS.get(found["type"])
    if group is None:
        return None
    scope, where = found["scope"], found["where"]
    if scope == "zones" and where:
        location = f"--zone={where}"
    elif scope == "regions" and where:
        location = f"--region={where}"
    elif scope == "global" or scope is None:
        # An address is regional unless global; snapshots, firewalls, networks are global.
        location = "--global" if group == "addresses" else ""
    else:
        return None
    return _joined(
        f"gcloud compute {group} delete",
        found["name"],
        location,
        f"--project={found['project']}",
    )


def _joined(command: str, *parts: str) -> str | None:
    """The command, or None when any part is not a plain Google name (`--flag=name` too)."""
    for part in parts:
        value = part.split("=", 1)[-1].removeprefix("gs://")
        if part and part != "--global" and not _SAFE.match(value):
            return None
    return " ".join([command, *(p for p in parts if p)])

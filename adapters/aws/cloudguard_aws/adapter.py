"""Live AWS sweeps with boto3: every tagged resource of every service, instances richest.

Per region: one `DescribeInstances` listing (paged, 1,000 per page: the
instance's state decides whether it bills), one `DescribeVolumes` listing (a
volume's size prices it), one `DescribeAddresses` (an Elastic IP bills whether
or not it is associated, and the Tagging API is not where every tool lists
them), and the Resource Groups Tagging API's `GetResources` for everything else
(every service, 100 a page); `--kind` narrows which of these run. Regions
are swept concurrently with a bound. Instances are normalised by the same code
as `aws ec2 describe-instances` JSON files (cloudguard_aws.export), so the
live and offline paths cannot disagree. boto3 is imported inside the sweep:
importing this module stays cheap.

Faults are explicit: a region that refuses (AuthFailure,
UnauthorizedOperation, OptInRequired) or cannot be reached becomes a
`SourceFailure` naming it; the other regions are still reported, and the
audit exits 75. Missing credentials are one failure naming the chain tried.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from cloudguard.cloud import kinds as cloud_kinds
from cloudguard.cloud.endpoints import EndpointRefused
from cloudguard.cloud.kinds import wanted as kinds_wanted
from cloudguard.cloud.pricing import PriceQuery
from cloudguard.cloud.progress import told
from cloudguard.cloud.reaping import DESTRUCTIVE, REVERSIBLE
from cloudguard.cloud.records import Resource, SourceFailure, SweepRequest, SweepResult
from cloudguard_aws import kinds, prices, reap_kinds
from cloudguard_aws.export import (
    DescribeInstancesExport,
    TaggingExport,
    address_resource,
    instances_of,
    jsonable,
    tagged_resource,
    volume_resource,
)
from cloudguard_aws.options import ACCOUNTS_FROM, OPTIONS, check_values
from cloudguard_aws.session import (
    CREDENTIAL_CHAIN,
    default_session,
    describe_error,
    enabled_regions,
    make_client,
    missing_credentials,
    open_session,
    retry_config,
)

if TYPE_CHECKING:
    from cloudguard_aws.reaper import AwsReaper

# Instance states whose instance exists (a terminated one is gone and bills nothing).
LIVE_INSTANCE_STATES = ("pending", "running", "stopping", "stopped")
# Types with listings of their own (state, size, attachment): the Tagging API's answer
# leaves them out.
OWN_LISTINGS = frozenset({"ec2:instance", "ec2:volume", "ec2:elastic-ip"})
OWN_KINDS = frozenset({cloud_kinds.VM, cloud_kinds.DISK, cloud_kinds.PUBLIC_IP})


# The session's and the export's names, importable from here as before.
__all__ = [
    "CREDENTIAL_CHAIN",
    "AwsAdapter",
    "default_session",
    "describe_error",
    "jsonable",
    "make_client",
    "retry_config",
    "volume_resource",
]


class AwsAdapter:
    """`cloudguard audit --provider aws`: `--region` (default: every enabled region),
    `--credential PROFILE` (default: boto3's credential chain)."""

    name = "aws"
    credential_names = None  # --credential is a profile name: boto3 says which exist

    # -- what the core asks of a cloud (cloudguard.cloud.adapter.CloudAdapter) --
    export_parsers = (DescribeInstancesExport(), TaggingExport())
    # EC2 bills only `running` (a stopped instance keeps its EBS volumes, which bill).
    billable_power_states = frozenset({"running"})
    power_notes: Mapping[str, str] = MappingProxyType({})
    hourly_prices: Mapping[str, float] = MappingProxyType({})  # in the bundled table
    kind_billing = kinds.BILLING  # which kinds bill while idle, and when
    reap_actions: Mapping[str, Mapping[str, str]] = MappingProxyType(
        {
            "vm": MappingProxyType({REVERSIBLE: "stop", DESTRUCTIVE: "terminate"}),
            "disk": MappingProxyType({DESTRUCTIVE: "delete"}),
            # One clear delete each (cloudguard_aws.reap_kinds); any other kind is not
            # reaped: the plan says what a person would run (`delete_command`).
            **{kind: MappingProxyType({DESTRUCTIVE: "delete"}) for kind in reap_kinds.IDS},
        }
    )
    any_kind_actions: Mapping[str, str] = MappingProxyType({})
    # Types whose delete destroys data, beyond the shared kinds (volumes, snapshots,
    # buckets, DB instances): never deleted by a default (cloudguard.reap.planning).
    data_kinds = frozenset(
        {"rds:cluster", "dynamodb:table", "elasticfilesystem:file-system", "ecr:repository"}
    )
    ids_never_reused = True  # an instance or volume id is never given to another resource
    case_insensitive_names = False  # EC2 tag keys and ids are exact

    def price_key(self, size: str) -> str:
        return size  # instance types are lower case by definition

    def price_query(self, resource: Resource) -> PriceQuery | None:
        return prices.price_query(resource)

    def price_list(self, request: SweepRequest) -> prices.PriceListQuery | None:
        return prices.price_list(request, self._session_factory)

    def delete_command(self, resource: Resource) -> str | None:
        return reap_kinds.delete_command(resource)

    def scope_of(self, resource: Resource) -> str:
        return resource.account

    # --accounts-from, --assume-role
    options = OPTIONS

    def check_options(self, values: Mapping[str, Any]) -> None:
        check_values(values)

    def __init__(self, session_factory: Callable[[SweepRequest], Any] | None = None) -> None:
        self._session_factory = session_factory or default_session

    def sweep(self, request: SweepRequest) -> SweepResult:
        from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

        try:
            session = open_session(request, self._session_factory)
        except EndpointRefused as refused:
            return _failed("aws credentials", str(refused))
        if ACCOUNTS_FROM.value_in(request.settings) == "organizations":
            from cloudguard_aws import organizations

            return organizations.sweep(session, request, _region_resources)
        try:
            if missing_credentials(session):
                raise NoCredentialsError()
            seed = session.region_name or "us-east-1"
            account = make_client(session, request, "sts", seed).get_caller_identity()["Account"]
            regions = list(request.regions) or enabled_regions(session, request, seed)
        except NoCredentialsError:
            return _failed(
                "aws credentials", f"no AWS credentials found; tried: {CREDENTIAL_CHAIN}"
            )
        except (ClientError, BotoCoreError) as error:
            return _failed(
                "aws account",
                f"cannot identify the account or its regions: {describe_error(error)}",
            )

        indexed = _explored(session, request, seed, account, regions)
        tagged_here = indexed.resources is None  # no complete index: each region's own

        def sweep_region(region: str) -> SweepResult:
            try:
                return SweepResult(
                    resources=_region_resources(session, request, region, account, tagged_here)
                )
            except (ClientError, BotoCoreError) as error:
                return _failed(f"aws region {region}", describe_error(error))

        with ThreadPoolExecutor(max_workers=max(1, request.concurrency)) as pool:
            results = list(
                pool.map(
                    lambda region: told(
                        request, f"aws region {region}", lambda: sweep_region(region)
                    ),
                    regions,
                )
            )
        return SweepResult(
            resources=(
                *(r for result in results for r in result.resources),
                *(indexed.resources or ()),
            ),
            failures=(*indexed.failures, *(f for result in results for f in result.failures)),
        )

    def reaper(self, request: SweepRequest) -> AwsReaper:
        """The live side of `cloudguard reap apply`, with this sweep's session and clients."""
        from cloudguard_aws.reaper import AwsReaper

        return AwsReaper(request, self._session_factory)


@dataclass(frozen=True)
class _Indexed:
    resources: tuple[Resource, ...] | None = None  # None: no complete index was read
    failures: tuple[SourceFailure, ...] = ()


def _explored(
    session: Any, request: SweepRequest, seed: str, account: str, regions: list[str]
) -> _Indexed:
    """Every tagged resource of the swept regions from Resource Explorer's aggregator index,
    when the request allows it and one is set up (cloudguard_aws.explorer)."""
    from botocore.exceptions import BotoCoreError, ClientError

    from cloudguard_aws import explorer

    wanted = kinds_wanted(request.kinds)
    if wanted is not None and not wanted - OWN_KINDS:
        return _Indexed()  # only the kinds with listings of their own
    try:
        mode = explorer.wanted(request)
        region = explorer.aggregator_region(session, request, seed) if mode else None
        if region is None:
            if mode == explorer.REQUIRED:
                raise explorer.ExplorerUnavailable("no aggregator index is set up")
            return _Indexed()
        found = explorer.search(session, request, region, account)
    except EndpointRefused as refused:  # named whatever the engine; nothing was sent there,
        # and the Tagging API still reads each region
        return _Indexed(None, (SourceFailure("aws resource explorer", str(refused)),))
    except (ClientError, BotoCoreError, explorer.ExplorerUnavailable) as error:
        if explorer.AWS_ENGINE.value_in(request.settings) != explorer.REQUIRED:
            return _Indexed()  # auto: the Tagging API per region reads the same
        unavailable = isinstance(error, explorer.ExplorerUnavailable)
        reason = str(error) if unavailable else describe_error(error)
        return _Indexed((), (SourceFailure("aws resource explorer", reason),))
    if found is None:
        return _Indexed()  # more than it counts: each region's Tagging API instead
    swept = {r.casefold() for r in regions}
    return _Indexed(
        tuple(
            r
            for r in found
            if r.kind not in OWN_KINDS and (not r.region or r.region.casefold() in swept)
        )
    )


def _region_resources(
    session: Any, request: SweepRequest, region: str, account: str, tagged: bool = True
) -> tuple[Resource, ...]:
    """One region, the listings the requested kinds need: instances (DescribeInstances, with
    their state: it decides billing), EBS volumes (DescribeVolumes, with their size), and
    every other tagged resource of every service (the Tagging API's GetResources)."""
    wanted = kinds_wanted(request.kinds)
    source = f"aws:{region}"
    found: list[Resource] = []
    if wanted is None or cloud_kinds.VM in wanted:
        ec2 = make_client(session, request, "ec2", region)
        pages = ec2.get_paginator("describe_instances").paginate(
            Filters=[{"Name": "instance-state-name", "Values": list(LIVE_INSTANCE_STATES)}],
            PaginationConfig={"PageSize": 1000},
        )
        reservations = [r for page in pages for r in page.get("Reservations", [])]
        found += instances_of({"Reservations": jsonable(reservations)}, source)
    if wanted is None or cloud_kinds.DISK in wanted:
        ec2 = make_client(session, request, "ec2", region)
        pages = ec2.get_paginator("describe_volumes").paginate()
        found += [
            volume_resource(volume, region, account)
            for page in pages
            for volume in page.get("Volumes", [])
        ]
    if wanted is None or cloud_kinds.PUBLIC_IP in wanted:
        ec2 = make_client(session, request, "ec2", region)
        found += [
            address_resource(address, region, account)
            for address in ec2.describe_addresses().get("Addresses", [])
        ]
    if (wanted is None or wanted - OWN_KINDS) and tagged:
        found += tagged_in_region(session, request, region, account)
    return tuple(found)


def tagged_in_region(
    session: Any, request: SweepRequest, region: str, account: str
) -> list[Resource]:
    """Every resource of the region that carries (or carried) a tag, whatever its service:
    the Resource Groups Tagging API, paged. Instances and volumes have listings of their own
    (their state and size), so theirs are left out here."""
    tagging = make_client(session, request, "resourcegroupstaggingapi", region)
    pages = tagging.get_paginator("get_resources").paginate(ResourcesPerPage=100)
    found = [
        tagged_resource(
            mapping["ResourceARN"], mapping.get("Tags"), f"aws:{region}", region, account
        )
        for page in pages
        for mapping in page.get("ResourceTagMappingList", [])
        if kinds.resource_type(mapping["ResourceARN"]) not in OWN_LISTINGS
    ]
    if any(r.kind == cloud_kinds.BUCKET for r in found):
        s3 = make_client(session, request, "s3", region)
        found = [object_count(s3, r) if r.kind == cloud_kinds.BUCKET else r for r in found]
    return found


OBJECTS_READ = 1000  # ListObjectsV2's page: "at least 1000 objects" past it


def object_count(s3: Any, bucket: Resource) -> Resource:
    """What a bucket holds, as S3 says it in one request (ListObjectsV2, MaxKeys 1000:
    KeyCount, and IsTruncated for more), in its `size`: "0 objects", "3 objects", "at least
    1000 objects". A bucket S3 does not answer for (access denied, another region's
    redirect) keeps "" (unknown): the plan then says "unknown how much"."""
    from botocore.exceptions import BotoCoreError, ClientError

    name = bucket.id.rsplit(":", 1)[-1]
    try:
        answer = s3.list_objects_v2(Bucket=name, MaxKeys=OBJECTS_READ)
    except (ClientError, BotoCoreError):
        return bucket
    count = int(answer.get("KeyCount") or 0)
    if answer.get("IsTruncated"):
        return bucket._replace(size=f"at least {count} objects")
    return bucket._replace(size=f"{count} objects")


def _failed(source: str, reason: str) -> SweepResult:
    return SweepResult(resources=(), failures=(SourceFailure(source=source, reason=reason),))

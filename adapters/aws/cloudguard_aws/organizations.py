"""Every account of an AWS organization: `--accounts-from organizations --assume-role NAME`.

The Cloud Custodian c7n-org pattern: from the caller's (management or
delegated administrator) account, `organizations:ListAccounts` (paged) names
the member accounts; each ACTIVE one is entered with `sts:AssumeRole` into
`arn:aws:iam::<id>:role/<NAME>`, and swept in the regions enabled for that
account (`ec2:DescribeRegions` with its own credentials), or in `--region`s.
Suspended, closing and closed accounts (`State`, which replaced `Status` in
September 2026) are skipped: AWS stops their resources.

Concurrency is bounded by `--concurrency` across the whole organization: the
accounts are entered with at most that many calls in flight, then every
(account, region) pair is swept from one pool of that size. An account that
cannot be entered or whose regions cannot be listed, and a region that
cannot be read, is a `SourceFailure` naming it (the audit exits 75); the
rest are still reported. boto3 is imported only inside the sweep.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from cloudguard.cloud.records import Resource, SourceFailure, SweepRequest, SweepResult
from cloudguard_aws.options import ASSUME_ROLE

SESSION_NAME = "cloudguard-audit"  # shows in each member account's CloudTrail
LIST_ACCOUNTS_PAGE = 20  # ListAccounts' largest page (MaxResults)


@dataclass(frozen=True)
class MemberAccount:
    id: str
    name: str

    @property
    def source(self) -> str:
        return f"aws account {self.id} ({self.name})" if self.name else f"aws account {self.id}"


@dataclass(frozen=True)
class _Entered:
    account: MemberAccount
    session: Any = None
    regions: tuple[str, ...] = ()
    failure: SourceFailure | None = None


RegionSweep = Callable[[Any, SweepRequest, str, str], tuple[Resource, ...]]


def role_arn(account_id: str, role_name: str) -> str:
    return f"arn:aws:iam::{account_id}:role/{role_name}"


def active_accounts(session: Any, request: SweepRequest, region: str) -> list[MemberAccount]:
    from cloudguard_aws.session import make_client

    client = make_client(session, request, "organizations", region)
    return [
        MemberAccount(str(account["Id"]), str(account.get("Name") or ""))
        for page in client.get_paginator("list_accounts").paginate(
            PaginationConfig={"PageSize": LIST_ACCOUNTS_PAGE}
        )
        for account in page.get("Accounts", [])
        if is_active(account)
    ]


def is_active(account: dict[str, Any]) -> bool:
    """`State` ACTIVE (`Status` before AWS retired it in September 2026). An account that
    says neither is swept anyway: skipping what cannot be classified could hide a VM."""
    state = account.get("State") or account.get("Status")
    return state is None or state == "ACTIVE"


def sweep(session: Any, request: SweepRequest, sweep_region: RegionSweep) -> SweepResult:
    """Sweep every active account of the organization `session` can list."""
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

    from cloudguard_aws.session import CREDENTIAL_CHAIN, describe_error

    seed = session.region_name or "us-east-1"
    try:
        if session.get_credentials() is None:
            raise NoCredentialsError()
        accounts = active_accounts(session, request, seed)
    except NoCredentialsError:
        return _failed("aws credentials", f"no AWS credentials found; tried: {CREDENTIAL_CHAIN}")
    except (ClientError, BotoCoreError) as error:
        return _failed(
            "aws organization",
            f"cannot list the organization's accounts (organizations:ListAccounts): "
            f"{describe_error(error)}",
        )
    if not accounts:
        return _failed("aws organization", "ListAccounts named no active account to sweep")

    from cloudguard_aws.session import make_client

    # One STS client for every AssumeRole: clients are thread-safe, creating them is not.
    sts = make_client(session, request, "sts", seed)
    workers = max(1, request.concurrency)
    with ThreadPoolExecutor(workers, thread_name_prefix="cloudguard-aws-org") as pool:
        entered = list(pool.map(lambda a: _enter(sts, request, a, seed), accounts))
        pairs = [(e, region) for e in entered if e.failure is None for region in e.regions]

        def one(pair: tuple[_Entered, str]) -> SweepResult:
            member, region = pair
            try:
                found = sweep_region(member.session, request, region, member.account.id)
            except (ClientError, BotoCoreError) as error:
                return _failed(f"{member.account.source} region {region}", describe_error(error))
            return SweepResult(found)

        results = list(pool.map(one, pairs))
    failures = [e.failure for e in entered if e.failure is not None]
    failures += [f for result in results for f in result.failures]
    return SweepResult(tuple(r for result in results for r in result.resources), tuple(failures))


def _enter(sts: Any, request: SweepRequest, account: MemberAccount, seed: str) -> _Entered:
    """Assume the role in `account` and list its regions; a failure names the account."""
    from botocore.exceptions import BotoCoreError, ClientError

    from cloudguard_aws.session import describe_error, enabled_regions, new_session

    arn = role_arn(account.id, ASSUME_ROLE.value_in(request.settings) or "")
    stage = f"assuming {arn}"
    try:
        credentials = sts.assume_role(RoleArn=arn, RoleSessionName=SESSION_NAME)["Credentials"]
        member = new_session(
            aws_access_key_id=credentials["AccessKeyId"],
            aws_secret_access_key=credentials["SecretAccessKey"],
            aws_session_token=credentials["SessionToken"],
            region_name=seed,
        )
        stage = "listing its enabled regions (ec2:DescribeRegions)"
        regions = tuple(request.regions) or tuple(enabled_regions(member, request, seed))
    except (ClientError, BotoCoreError) as error:
        failure = SourceFailure(account.source, f"{describe_error(error)} while {stage}")
        return _Entered(account, failure=failure)
    return _Entered(account, member, regions)


def _failed(source: str, reason: str) -> SweepResult:
    return SweepResult((), (SourceFailure(source, reason),))

"""`--accounts-from organizations --assume-role NAME` through the real CLI and boto3, against
moto in server mode (organizations, sts, ec2) on 127.0.0.1, behind a loopback proxy that
refuses chosen calls the way AWS does (aws_refusing_proxy.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
import typer
from aws_helpers import AMI, FAKE_KEYS
from aws_refusing_proxy import Refusals, refusing_proxy
from cloudguard_aws import organizations
from named_checks import broken
from typer.testing import CliRunner

from cloudguard.cli.audit import register_audit

ROLE = "OrganizationAccountAccessRole"
MANAGEMENT = "123456789012"  # moto's account for its fake keys


def cli(*args: str) -> Any:
    app = typer.Typer()

    @app.callback()
    def main() -> None:  # a group, so the command is invoked as `audit`, as users do
        pass

    register_audit(app)
    return CliRunner().invoke(app, ["audit", *args])


@pytest.fixture
def proxy(endpoint: str) -> Iterator[tuple[str, Refusals]]:
    with refusing_proxy(endpoint) as found:
        yield found


@pytest.fixture(autouse=True)
def moto_identity(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The CLI's default boto3 session gets moto's keys and nothing from the home directory."""
    monkeypatch.chdir(tmp_path)
    for name in ("AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        empty = tmp_path / name.lower()
        empty.write_text("")
        monkeypatch.setenv(name, str(empty))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", FAKE_KEYS["aws_access_key_id"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", FAKE_KEYS["aws_secret_access_key"])
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def organization(endpoint: str, *names: str) -> list[str]:
    """An organization with these member accounts; returns their ids."""
    org = boto3.client("organizations", endpoint_url=endpoint, region_name="us-east-1", **FAKE_KEYS)
    org.create_organization(FeatureSet="ALL")
    return [
        org.create_account(AccountName=name, Email=f"{name}@example.com")["CreateAccountStatus"][
            "AccountId"
        ]
        for name in names
    ]


def launch_in(endpoint: str, account: str, region: str, task: str) -> str:
    """An instance in `account`, launched with that account's assumed-role credentials."""
    sts = boto3.client("sts", endpoint_url=endpoint, region_name="us-east-1", **FAKE_KEYS)
    arn = f"arn:aws:iam::{account}:role/{ROLE}"
    keys = sts.assume_role(RoleArn=arn, RoleSessionName="seed")["Credentials"]
    ec2 = boto3.client(
        "ec2",
        endpoint_url=endpoint,
        region_name=region,
        aws_access_key_id=keys["AccessKeyId"],
        aws_secret_access_key=keys["SecretAccessKey"],
        aws_session_token=keys["SessionToken"],
    )
    tags = [{"ResourceType": "instance", "Tags": [{"Key": "task-id", "Value": task}]}]
    answer = ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1, TagSpecifications=tags)
    return str(answer["Instances"][0]["InstanceId"])


def audit_organization(url: str, *extra: str) -> Any:
    return cli("--provider", "aws", "--credential", "fake", "--management-endpoint", url,
               "--accounts-from", "organizations", "--assume-role", ROLE, "--format", "json",
               *extra)  # fmt: skip


def found(done: Any) -> dict[str, tuple[str, str]]:
    """instance id -> (account, region) of every finding."""
    return {
        f["resource"]["id"]: (f["resource"]["account"], f["resource"]["region"])
        for f in json.loads(done.stdout)["findings"]
    }


def test_every_active_account_is_entered_with_its_role_and_swept_in_its_regions(
    endpoint: str, proxy: tuple[str, Refusals]
) -> None:
    url, refusals = proxy
    dev, prod, closed = organization(endpoint, "dev", "prod", "closed")
    in_dev = launch_in(endpoint, dev, "eu-west-1", "task-dev")
    in_prod = launch_in(endpoint, prod, "us-east-1", "task-prod")
    launch_in(endpoint, closed, "us-east-1", "task-closed")
    org = boto3.client("organizations", endpoint_url=endpoint, region_name="us-east-1", **FAKE_KEYS)
    org.close_account(AccountId=closed)
    # Each account has its own enabled (opt-in) regions: no --region, DescribeRegions in each.
    refusals.regions_enabled.update(
        {MANAGEMENT: ["us-east-1"], dev: ["us-east-1", "eu-west-1"], prod: ["us-east-1"]}
    )
    launch_in(endpoint, prod, "eu-west-1", "task-prod-not-enabled")  # a region prod did not enable

    # No evidence is given: the instances are unverified, accepted by name (this test is
    # about which accounts and regions are swept).
    done = audit_organization(url, "--concurrency", "4", "--allow-unverified")

    assert sorted(refusals.assumed) == sorted(
        f"arn:aws:iam::{account}:role/{ROLE}" for account in (MANAGEMENT, dev, prod)
    ), broken("active-accounts-only", "a suspended account was entered, or an active one skipped")
    assert done.exit_code == 0, done.output  # launched a moment ago: pending, within grace
    assert found(done) == {in_dev: (dev, "eu-west-1"), in_prod: (prod, "us-east-1")}


def test_an_account_whose_role_cannot_be_assumed_is_named_and_the_run_is_75(
    endpoint: str, proxy: tuple[str, Refusals]
) -> None:
    url, refusals = proxy
    dev, prod = organization(endpoint, "dev", "prod")
    in_dev = launch_in(endpoint, dev, "us-east-1", "task-dev")
    launch_in(endpoint, prod, "us-east-1", "task-prod")
    refusals.roles_of_accounts.add(prod)

    done = audit_organization(url, "--region", "us-east-1")

    assert done.exit_code == 75, broken(
        "an-unentered-account-is-named",
        f"an account that could not be entered was not named: {done.output}",
    )
    assert f"could not read aws account {prod} (prod): AccessDenied (HTTP 403)" in done.stderr
    assert f"while assuming arn:aws:iam::{prod}:role/{ROLE}" in done.stderr
    assert found(done) == {in_dev: (dev, "us-east-1")}  # the readable accounts still report


def test_a_region_that_cannot_be_read_is_named_and_the_run_is_75(
    endpoint: str, proxy: tuple[str, Refusals]
) -> None:
    url, refusals = proxy
    (dev,) = organization(endpoint, "dev")
    in_east = launch_in(endpoint, dev, "us-east-1", "task-east")
    launch_in(endpoint, dev, "eu-west-1", "task-west")
    refusals.regions_of_accounts.add((dev, "eu-west-1"))

    done = audit_organization(url, "--region", "us-east-1", "--region", "eu-west-1")

    assert done.exit_code == 75, broken(
        "an-unreadable-region-is-named", f"an unreadable region was not named: {done.output}"
    )
    assert f"could not read aws account {dev} (dev) region eu-west-1: UnauthorizedOperation" in (
        done.stderr
    )
    assert found(done) == {in_east: (dev, "us-east-1")}


def test_every_page_of_accounts_is_read_and_calls_stay_within_the_concurrency_bound(
    endpoint: str, proxy: tuple[str, Refusals], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, refusals = proxy
    organization(endpoint, *(f"member-{n}" for n in range(6)))
    monkeypatch.setattr(organizations, "LIST_ACCOUNTS_PAGE", 2)  # 7 accounts: 4 pages

    done = audit_organization(url, "--concurrency", "2", "--region", "us-east-1")

    assert done.exit_code == 0, done.output
    assert refusals.actions["AWSOrganizationsV20161128.ListAccounts"] == 4
    assert len(set(refusals.assumed)) == 7
    assert refusals.peak_in_flight <= 2


def test_no_account_to_sweep_is_named_not_reported_clean(
    endpoint: str, proxy: tuple[str, Refusals]
) -> None:
    url, _ = proxy  # no organization: moto's ListAccounts names no account

    done = audit_organization(url, "--region", "us-east-1")

    assert done.exit_code == 75, done.output
    assert "could not read aws organization: ListAccounts named no active account" in done.stderr


@pytest.mark.parametrize(
    ("account", "swept"),
    [
        ({"State": "ACTIVE"}, True),
        ({"State": "SUSPENDED", "Status": "SUSPENDED"}, False),
        ({"State": "PENDING_CLOSURE"}, False),
        ({"State": "CLOSED"}, False),
        ({"State": "PENDING_ACTIVATION"}, False),
        ({"Status": "ACTIVE"}, True),  # before State existed
        ({"Status": "SUSPENDED"}, False),
        ({}, True),  # neither: swept, not silently skipped
    ],
)
def test_which_accounts_are_swept(account: dict[str, str], swept: bool) -> None:
    assert organizations.is_active(account) is swept


@pytest.mark.parametrize(
    "options",
    [("--accounts-from", "organizations"), ("--assume-role", ROLE), ("--accounts-from", "ou")],
)
def test_accounts_from_and_assume_role_go_together(options: tuple[str, str]) -> None:
    done = cli("--provider", "aws", *options)

    assert done.exit_code == 2, done.output

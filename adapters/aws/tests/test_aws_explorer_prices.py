"""Resource Explorer's aggregator index and the Price List Query API, which moto does not
implement: boto3 against a fake of each on 127.0.0.1 (fake_aws_services.py), beside moto."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from aws_helpers import FAKE_KEYS
from aws_leaked_run import RUN, TAGS, AwsLeakedRun
from fake_aws_services import FakeAwsServices, ebs_product, ec2_product, serve
from test_aws_kinds import live, run
from test_aws_reaper import cli

TODAY = datetime.now(UTC).date().isoformat()
EKS = "arn:aws:eks:us-east-1:123456789012:cluster/eks-ci-77"

__all__ = ["run"]  # the fixture, shared with test_aws_kinds


@pytest.fixture
def services() -> Iterator[FakeAwsServices]:
    with serve() as fake:
        yield fake


def index_everything(endpoint: str, services: FakeAwsServices) -> None:
    """The aggregator index holds what the account holds (moto's tagged resources) and, as
    real AWS, the EKS cluster moto's Tagging API does not list."""
    services.index("us-east-1")
    tagging = boto3.client(
        "resourcegroupstaggingapi", endpoint_url=endpoint, region_name="us-east-1", **FAKE_KEYS
    )
    for mapping in tagging.get_resources(ResourcesPerPage=100)["ResourceTagMappingList"]:
        tags = {t["Key"]: t["Value"] for t in mapping["Tags"]}
        services.indexed(mapping["ResourceARN"], "us-east-1", tags)
    services.indexed(EKS, "us-east-1", TAGS)


def audit(*args: str) -> tuple[int, dict[str, Any]]:
    done = cli("audit", "--leaked-by", f"ci-run={RUN}", "--format", "json", *args)
    return done.exit_code, json.loads(done.stdout)


def test_one_resource_explorer_search_replaces_the_tagging_api(
    endpoint: str, run: AwsLeakedRun, services: FakeAwsServices
) -> None:
    index_everything(endpoint, services)

    code, report = audit(*live(endpoint), "--resource-explorer-endpoint", services.endpoint)

    found = {f["resource"]["id"]: f["resource"]["kind"] for f in report["findings"]}
    assert found == {**run.kinds, EKS: "kubernetes-cluster"}, "the index was not read whole"
    assert services.requests == {"ListIndexes": 1, "Search": 1}
    assert code == 1


def test_an_incomplete_search_is_not_taken_for_the_whole_account(
    endpoint: str, run: AwsLeakedRun, services: FakeAwsServices
) -> None:
    index_everything(endpoint, services)
    for n in range(1000):  # past what a search counts: Count.Complete is false
        services.indexed(f"arn:aws:sqs:us-east-1:123456789012:queue-{n}", "us-east-1", {})

    _, report = audit(*live(endpoint), "--resource-explorer-endpoint", services.endpoint)

    found = {f["resource"]["id"] for f in report["findings"]}
    assert found == set(run.kinds), "an incomplete index answer was reported"  # the Tagging API


def test_explorer_required_but_not_set_up_is_a_named_failure(
    endpoint: str, run: AwsLeakedRun, services: FakeAwsServices
) -> None:
    done = cli("audit", *live(endpoint), "--aws-engine", "resource-explorer",
               "--resource-explorer-endpoint", services.endpoint)  # fmt: skip

    assert done.exit_code == 75, done.output
    assert "aws resource explorer: no aggregator index is set up" in done.stderr


def test_an_explorer_endpoint_the_credential_may_not_reach_is_named_not_asked(
    endpoint: str, run: AwsLeakedRun
) -> None:
    """moto's fake keys may not leave loopback: an explorer endpoint elsewhere is a named
    failure (75) in every engine mode, and the Tagging API's findings still stand."""
    code, report = audit(*live(endpoint), "--resource-explorer-endpoint", "https://example.invalid")

    assert code == 75
    (failure,) = report["failures"]
    assert failure["source"] == "aws resource explorer"
    assert "credential 'fake' answers only a loopback" in failure["reason"], failure
    assert {f["resource"]["id"] for f in report["findings"]} == set(run.kinds)


def test_prices_come_from_the_price_list_query_api(
    endpoint: str, run: AwsLeakedRun, services: FakeAwsServices
) -> None:
    services.products += [
        ec2_product("m5.large", "us-east-1", "0.0960000000", operatingSystem="Windows"),
        ec2_product("m5.large", "us-east-1", "0.0960000000", tenancy="Dedicated"),
        ec2_product("m5.large", "us-east-1", "0.0960000000"),
        ebs_product("gp3", "us-east-1", "0.0800000000"),
    ]

    _, report = audit(*live(endpoint), "--price-list-endpoint", services.endpoint)

    costs = {f["resource"]["id"]: f["cost"] for f in report["findings"]}
    source = f"AWS Price List Query API, {TODAY}"
    assert (costs[run.instance]["hourly"], costs[run.instance]["source"]) == (0.096, source)
    extra = run.volumes[-1]  # 100 GiB of gp3 at 0.08 a GiB-month
    assert costs[extra]["hourly"] == pytest.approx(100 * 0.08 / 730)
    assert costs[extra]["source"] == source
    assert services.requests["GetProducts"] >= 2


def test_moto_never_sends_its_price_questions_to_aws(endpoint: str, run: AwsLeakedRun) -> None:
    """--management-endpoint without --price-list-endpoint: no price list is read (the real
    one would be a reach from a test); the bundled table prices the instance."""
    _, report = audit(*live(endpoint))

    costs = {f["resource"]["id"]: f["cost"] for f in report["findings"]}
    assert costs[run.instance]["source"] == "bundled table 2025-06-01 (offline fallback)"

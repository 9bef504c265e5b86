"""The Resource Graph engine (`--engine resource-graph`) through azure-mgmt-resourcegraph
against the fake ARM's Microsoft.ResourceGraph endpoint, over TLS on 127.0.0.1."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import typer
from azure.core.exceptions import HttpResponseError
from azure.mgmt.resourcegraph import ResourceGraphClient
from azure.mgmt.resourcegraph.models import QueryRequest, QueryRequestOptions
from azure_helpers import FAST_RETRY, SUB_A, SUB_B, SUB_C, adapter, request_for, sdk_options
from cloudguard_azure import demo, resource_graph
from cloudguard_azure.budget import Clock
from cloudguard_azure.fake_arm import FakeArm
from named_checks import broken
from typer.testing import CliRunner

from cloudguard.cli.audit import register_audit

GRAPH = "POST resource_graph"


def cli(*args: str) -> Any:
    app = typer.Typer()

    @app.callback()
    def main() -> None:  # a group, so the command is invoked as `audit`, as users do
        pass

    register_audit(app)
    return CliRunner().invoke(app, ["audit", *args])


def live(arm: FakeArm) -> list[str]:
    return [
        "--provider",
        "azure",
        "--credential",
        "fake-arm",
        "--management-endpoint",
        arm.base_url,
        "--ca-bundle",
        arm.ca_pem,
    ]


def graph_request(arm: FakeArm, **overrides: Any) -> Any:
    return request_for(arm, engine="resource-graph", **overrides)


# -- the same findings as the ARM engine --------------------------------------------------


@pytest.fixture
def incident_fleet(arm: FakeArm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The demo's incident fleet plus the cases the two engines could read differently."""
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)  # no cloudguard.toml from the repository applies
    shas = demo.make_repo(tmp_path / "repo")
    home = demo.make_controller_home(tmp_path / "controller")
    now = datetime.now(UTC)
    demo.seed_fleet(arm.state, shas, now)
    arm.state.add_vm(
        demo.SUB_PILOT, "pilot", "vm-stopped", power_state="stopped", tags={"task-id": "t-stop"}
    )
    arm.state.add_vm(demo.SUB_PILOT, "pilot", "vm-no-power", power_state="", tags={"task-id": "x"})
    arm.state.add_disk(demo.SUB_PILOT, "pilot", "disk-left", tags={"task-id": "cloud-noenv-c7"})
    arm.state.add_disk(demo.SUB_PILOT, "pilot", "disk-untagged")
    vm_id = arm.state.vm(demo.SUB_PILOT, "pilot", demo.INCIDENT_VM).id  # type: ignore[union-attr]
    arm.state.add_disk(
        demo.SUB_PILOT, "pilot", "disk-attached", tags={"task-id": "t"}, managed_by=vm_id
    )
    return [
        "--subscription",
        demo.SUB_FLEET,
        "--subscription",
        demo.SUB_PILOT,
        "--controller-home",
        str(home),
        "--repo",
        str(tmp_path / "repo"),
        "--format",
        "json",
    ]


def by_id(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Findings in one order, without their age: the two runs are seconds apart."""
    timeless = [{k: v for k, v in f.items() if k != "age_seconds"} for f in findings]
    return sorted(timeless, key=lambda f: str(f["resource"]["id"]))


def test_both_engines_give_identical_findings_on_the_same_fleet(
    arm: FakeArm, incident_fleet: list[str]
) -> None:
    by_arm = cli(*live(arm), *incident_fleet, "--engine", "arm")
    arm_requests = dict(arm.faults.requests)
    arm.faults.reset_counts()
    by_graph = cli(*live(arm), *incident_fleet, "--engine", "resource-graph")

    assert by_arm.exit_code == by_graph.exit_code == 1, by_arm.output + by_graph.output
    # Every kind, one paged query: its 20 rows (2 subscriptions, 3 groups, 7 VMs, 3 disks,
    # 5 NICs... whatever the fleet holds) fit in one page of 1,000.
    assert GRAPH not in arm_requests and arm.faults.requests == {GRAPH: 1}
    # What changed since the last audit differs by design (the second audit knows the
    # first one's findings): the findings themselves are the same.
    arm_findings = [_judged(f) for f in json.loads(by_arm.stdout)["findings"]]
    graph_findings = [_judged(f) for f in json.loads(by_graph.stdout)["findings"]]
    assert len(arm_findings) == 9  # 7 VMs and the fleet's two disks, attached or not
    assert by_id(graph_findings) == by_id(arm_findings)
    verdicts = {f["resource"]["name"]: f["verdict"] for f in graph_findings}
    assert verdicts[demo.INCIDENT_VM] == "orphan" and "disk-left" in verdicts


def _judged(finding: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in finding.items() if key != "history"}


def test_auto_engine_switches_to_resource_graph_above_the_threshold(
    arm: FakeArm, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(resource_graph, "AUTO_ABOVE_SUBSCRIPTIONS", 1)
    for sub in (SUB_A, SUB_B):
        arm.state.add_vm(sub, "pilot", "vm-1", tags={"owner": "ci"})

    one = cli(*live(arm), "--subscription", SUB_A)
    requests_for_one = dict(arm.faults.requests)
    arm.faults.reset_counts()
    two = cli(*live(arm), "--subscription", SUB_A, "--subscription", SUB_B)

    assert one.exit_code == two.exit_code == 0, one.output + two.output
    assert GRAPH not in requests_for_one
    assert arm.faults.requests == {GRAPH: 1}  # every kind: one query, one page


def test_the_engine_can_be_chosen_in_the_config_file(
    arm: FakeArm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cloudguard.toml").write_text('[audit]\nengine = "resource-graph"\n')
    arm.state.add_vm(SUB_A, "pilot", "vm-1", tags={"owner": "ci"})

    done = cli(*live(arm), "--subscription", SUB_A)

    assert done.exit_code == 0, done.output
    assert arm.faults.requests == {GRAPH: 1}


@pytest.mark.parametrize(
    ("where", "code"), [("cli", 2), ("config", 97)], ids=["command-line", "config-file"]
)
def test_an_unknown_engine_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, code: int
) -> None:
    monkeypatch.chdir(tmp_path)
    extra = ["--engine", "graph"] if where == "cli" else []
    if where == "config":
        (tmp_path / "cloudguard.toml").write_text('[audit]\nengine = "graph"\n')

    done = cli("--provider", "azure", "--subscription", SUB_A, *extra)

    assert done.exit_code == code, done.output
    assert "'graph' is not one of auto, arm, resource-graph" in done.output


def test_every_skip_token_page_is_followed(arm: FakeArm) -> None:
    arm.faults.graph.page_size = 7
    made = arm.state.seed_fleet([SUB_A, SUB_B], groups_per_subscription=5, vms_per_group=10)

    result = adapter().sweep(graph_request(arm, subscriptions=(SUB_A, SUB_B)))

    assert result.failures == ()
    assert len({r.id for r in result.resources}) == made == 100
    # `--kind vm`: one page of subscriptions, 15 pages of VMs (100 rows, 7 a page).
    assert arm.faults.requests == {GRAPH: 1 + 15}


def test_subscriptions_are_batched_at_most_1000_per_query(arm: FakeArm) -> None:
    subs = [f"0b1f6471-1bf0-4dda-aec3-{n:012d}" for n in range(1001)]
    for sub in subs:
        arm.state.add_subscription(sub)
    arm.state.add_vm(subs[0], "pilot", "vm-first")
    arm.state.add_vm(subs[-1], "pilot", "vm-last")

    result = adapter().sweep(graph_request(arm, subscriptions=tuple(subs), concurrency=1))

    assert result.failures == ()  # the fake answers 400 to more than 1,000 subscriptions
    assert sorted(r.name for r in result.resources) == ["vm-first", "vm-last"]
    assert arm.faults.requests == {GRAPH: 2 * 2}  # two batches, two queries each (VMs)


# -- nothing unread is reported clean ------------------------------------------------------


@pytest.mark.parametrize("kinds", [[], ["--kind", "vm"]], ids=["every-kind", "vms"])
def test_a_subscription_resource_graph_cannot_see_is_named_and_the_run_is_75(
    arm: FakeArm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kinds: list[str]
) -> None:
    """Every kind: no subscription row in the union; VMs: missing from the first query."""
    monkeypatch.chdir(tmp_path)
    arm.state.add_vm(SUB_A, "pilot", "vm-a", tags={"task-id": "t-a"})
    arm.state.add_vm(SUB_B, "pilot", "vm-b", tags={"task-id": "t-b"})
    arm.faults.forbid(SUB_B)  # Resource Graph leaves it out, without an error

    subscriptions = ["--subscription", SUB_A, "--subscription", SUB_B, "--subscription", SUB_C]
    done = cli(*live(arm), *subscriptions, *kinds, "--engine", "resource-graph", "--format", "json")

    assert done.exit_code == 75, broken(
        "an-unseen-subscription-is-unread", f"unreadable subscription not named: {done.output}"
    )
    assert f"could not read azure subscription {SUB_B}: Resource Graph cannot see" in done.stderr
    assert f"could not read azure subscription {SUB_C}" in done.stderr  # does not exist
    assert f"subscription {SUB_A}" not in done.stderr
    names = [f["resource"]["name"] for f in json.loads(done.stdout)["findings"]]
    assert names == ["vm-a"]  # what was read is still reported


def test_a_truncated_answer_without_skip_token_fails_the_batch(arm: FakeArm) -> None:
    arm.faults.graph.page_size = 3
    arm.state.seed_fleet([SUB_A, SUB_B], groups_per_subscription=1, vms_per_group=5)
    arm.faults.graph.truncate_next = 2  # the first page of VMs and ... never reached

    result = adapter().sweep(graph_request(arm, subscriptions=(SUB_A, SUB_B)))

    assert result.resources == (), broken(
        "a-truncated-answer-fails-the-batch", "a truncated answer was reported"
    )
    assert [f.source for f in result.failures] == [
        f"azure subscription {SUB_A}",
        f"azure subscription {SUB_B}",
    ]
    assert "truncated the result (3 of 10 rows)" in result.failures[0].reason


def test_a_query_still_failing_after_retries_names_every_subscription_of_its_batch(
    arm: FakeArm,
) -> None:
    arm.state.add_vm(SUB_A, "pilot", "vm-a")
    arm.faults.inject(500, times=50, match="Microsoft.ResourceGraph")

    result = adapter().sweep(graph_request(arm, subscriptions=(SUB_A, SUB_B)))

    assert result.resources == ()
    assert [f.source for f in result.failures] == [
        f"azure subscription {SUB_A}",
        f"azure subscription {SUB_B}",
    ]
    assert result.failures[0].reason.startswith("HTTP 500 InternalServerError")
    assert "in Resource Graph (a batch of 2 subscriptions)" in result.failures[0].reason


# -- the per-user quota -------------------------------------------------------------------


def test_a_spent_quota_is_waited_for_before_the_next_query(arm: FakeArm) -> None:
    arm.faults.graph.page_size = 3
    arm.state.seed_fleet([SUB_A], groups_per_subscription=1, vms_per_group=10)
    arm.faults.graph.quota(limit=2, window=1.0)  # 1 + 4 queries: two resets to wait for
    gate = resource_graph.QuotaGate()
    request = graph_request(arm)

    def options() -> dict[str, Any]:
        return adapter()._client_options(request, Clock(FAST_RETRY))

    result = resource_graph.sweep(arm.credential(), request, [SUB_A], options, lambda r: True, gate)

    assert arm.faults.graph.early == 0, broken(
        "the-spent-quota-is-waited-for", "queries sent while the quota was spent"
    )
    assert result.failures == () and len(result.resources) == 10
    assert gate.waited >= 2


def test_a_429_with_the_quota_drained_waits_for_the_announced_reset(arm: FakeArm) -> None:
    arm.state.add_vm(SUB_A, "pilot", "vm-a")
    arm.faults.graph.throttle(times=1, resets_after=1.0)  # 429, no Retry-After

    result = adapter().sweep(graph_request(arm))

    assert arm.faults.graph.early == 0, broken(
        "the-spent-quota-is-waited-for", "queries sent while the quota was spent"
    )
    assert result.failures == () and [r.name for r in result.resources] == ["vm-a"]
    assert arm.faults.graph.throttled == 1


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("00:00:05", 5), ("00:01:00", 60), ("01:00:00", 3600), ("00:00:03.5", 3), ("soon", None)],
)
def test_resets_after_is_read_as_hours_minutes_seconds(header: str, seconds: int | None) -> None:
    assert resource_graph.resets_after_seconds(header) == seconds


# -- the fake serves exactly the engine's shapes ---------------------------------------------


def query(arm: FakeArm, text: str, subscriptions: list[str], **options: Any) -> Any:
    with ResourceGraphClient(arm.credential(), **sdk_options(arm), retry_total=0) as client:
        return client.resources(
            QueryRequest(
                subscriptions=subscriptions, query=text, options=QueryRequestOptions(**options)
            ),
            cls=lambda response, body, _: (body, response.http_response.headers),
        )


def test_the_fake_answers_the_engines_queries_with_the_quota_headers(arm: FakeArm) -> None:
    arm.state.add_vm(SUB_A, "pilot", "vm-a", power_state="deallocated")

    body, headers = query(arm, resource_graph.VMS_QUERY, [SUB_A], top=1000)

    assert body.total_records == body.count == 1
    assert body.data[0]["powerState"] == "PowerState/deallocated"
    assert headers["x-ms-user-quota-remaining"] == "999"
    assert headers["x-ms-user-quota-resets-after"] == "00:00:05"


@pytest.mark.parametrize(
    ("text", "subscriptions", "options", "message"),
    [
        ("resources | project id", [SUB_A], {}, "Query is invalid"),
        (resource_graph.VMS_QUERY, [], {}, "subscriptions must be a non-empty list"),
        (resource_graph.VMS_QUERY, [SUB_A] * 1001, {}, "At most 1000 subscriptions"),
        (resource_graph.VMS_QUERY, [SUB_A], {"top": 1001}, "$top must be between 1 and 1000"),
        (resource_graph.VMS_QUERY, [SUB_A], {"result_format": "table"}, "resultFormat"),
        (resource_graph.VMS_QUERY, [SUB_A], {"skip_token": "forged"}, "Invalid $skipToken"),
    ],
)
def test_the_fake_refuses_any_other_request_with_arms_error_shape(
    arm: FakeArm, text: str, subscriptions: list[str], options: dict[str, Any], message: str
) -> None:
    with pytest.raises(HttpResponseError) as refused:
        query(arm, text, subscriptions, **options)

    assert refused.value.status_code == 400
    assert refused.value.error is not None and refused.value.error.code == "BadRequest"
    assert message in str(refused.value)

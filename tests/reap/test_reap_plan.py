"""`cloudguard reap plan`: which findings are planned, what is refused, and the plan document."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from named_checks import broken, raises_at
from reap_helpers import NOW, audit_report, cli, controller_home, fleet, write_json

from cloudguard.documents.plan import PlanError, PlanUsageError, load_plan, plan_document
from cloudguard.reap.planning import build_plan


@pytest.fixture
def report(tmp_path: Path) -> Path:
    home = controller_home(tmp_path / "controller")
    return write_json(tmp_path / "audit.json", audit_report(fleet(), home))


def plan_of(report: Path, *args: str) -> dict:
    done = cli("reap", "plan", "--from", str(report), *args)
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def test_default_plan_is_orphans_and_leaked_with_the_reversible_action(report: Path) -> None:
    plan = plan_of(report)

    planned = {i["name"]: (i["verdict"], i["action"]) for i in plan["items"]}
    assert planned == {
        "vm-orphan": ("orphan", "deallocate"),
        "vm-leaked": ("leaked", "deallocate"),
        "i-0aws0orphan": ("orphan", "stop"),  # EC2's reversible action
    }
    why = {n["name"]: n["why"] for n in plan["not_planned"]}
    assert why["vm-protected"] == "protected by tag 'CloudGuard-Protect'"
    assert why["vm-off"] == "already deallocated: nothing to deallocate"
    assert "no reversible action" in why["disk-orphan"]
    assert "vm-ok" not in planned and "vm-pending" not in planned and "vm-ok" not in why


def test_delete_must_be_asked_for_and_covers_disks_and_deallocated_vms(report: Path) -> None:
    plan = plan_of(report, "--action", "delete", "--delete-data", "disk")

    planned = {i["name"]: i["action"] for i in plan["items"]}
    assert planned == {
        "vm-orphan": "delete",
        "vm-leaked": "delete",
        "vm-off": "delete",
        "disk-orphan": "delete",
        "i-0aws0orphan": "terminate",
    }
    assert [n["name"] for n in plan["not_planned"]] == ["vm-protected"]
    assert plan["delete_data"] == ["disk"]
    holds = {i["name"]: i["holds_data"] for i in plan["items"]}
    assert holds["disk-orphan"] == "unknown" and holds["vm-orphan"] == ""


def test_a_kind_that_holds_data_is_listed_not_deleted_unless_named(report: Path) -> None:
    """Data is never destroyed by a default: `--action delete` alone lists the orphan disk
    with why, and deletes what holds no data."""
    plan = plan_of(report, "--action", "delete")

    planned = {i["name"] for i in plan["items"]}
    assert "disk-orphan" not in planned, broken(
        "data-is-never-deleted-by-a-default",
        f"a disk planned for delete without --delete-data disk: {sorted(planned)}",
    )
    assert planned == {"vm-orphan", "vm-leaked", "vm-off", "i-0aws0orphan"}
    why = {n["name"]: n["why"] for n in plan["not_planned"]}
    assert why["disk-orphan"] == (
        "holds data: unknown (a azure disk); listed, not deleted: to delete what it holds, "
        "plan with --delete-data disk"
    )
    assert plan["delete_data"] == []


def test_a_hand_edited_plan_cannot_delete_data_its_kinds_do_not_name(
    report: Path, tmp_path: Path
) -> None:
    """A plan edited to add a disk's delete (or one made before the data rule, v3) is
    refused: the kinds a plan may destroy data of are reviewed with it."""
    plan = plan_of(report, "--action", "delete", "--delete-data", "disk")
    plan["delete_data"] = []
    edited = write_json(tmp_path / "edited.json", plan)

    with raises_at(
        "an-edited-plan-cannot-delete-data",
        PlanUsageError,
        "a disk's delete in a plan whose delete_data does not name disk",
        match="holds data, and the plan does not name its kind",
    ):
        load_plan(edited)

    plan["schema_version"] = 3  # an old plan: read as deleting no data
    plan.pop("delete_data")
    for item in plan["items"]:
        item.pop("holds_data")
    old = write_json(tmp_path / "old.json", plan)
    with pytest.raises(PlanUsageError, match=r"reap plan --delete-data disk` \(plan again\)"):
        load_plan(old)
    plan["items"] = [i for i in plan["items"] if i["kind"] != "disk"]
    assert len(load_plan(write_json(tmp_path / "old-no-data.json", plan)).items) == 4


def test_an_item_carries_the_snapshot_apply_compares_against(report: Path) -> None:
    plan = plan_of(report, "--verdict", "leaked")

    (item,) = plan["items"]
    assert item["tags"] == {"task-id": "task-0042", "run-id": "ci-77"}
    assert item["leaked_by"] == ["run-id=ci-77"]
    assert item["reasons"] == ["leaked-run-tag"]
    assert item["group"] == "pilot" and item["region"] == "westeurope"
    assert plan["policy"] == {
        "task_tag": "task-id",
        "generation_tag": "repository-generation",
        "leaked_by": ["run-id=ci-77"],
    }
    assert plan["verdicts"] == ["leaked"]
    assert plan["audit"]["generated_at"] == item["audited_at"] == NOW.isoformat()


def test_the_table_says_what_would_be_done_and_the_plan_file_is_written(
    report: Path, tmp_path: Path
) -> None:
    output = tmp_path / "plan.json"
    done = cli("reap", "plan", "--from", str(report), "--output", str(output))

    assert done.exit_code == 0, done.output
    assert "3 to deallocate" in done.stdout and "vm-orphan" in done.stdout
    assert "not planned: orphan vm-protected: protected by tag" in done.stdout
    assert load_plan(output).items[0].name == "vm-orphan"


@pytest.mark.parametrize("verdict", ["suspect", "pending", "unverified", "ok"])
def test_a_verdict_that_is_never_reapable_is_a_usage_error(report: Path, verdict: str) -> None:
    done = cli("reap", "plan", "--from", str(report), "--verdict", verdict)
    assert done.exit_code == 2
    assert f"verdict {verdict!r} is never reapable" in done.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--verdict", "orphans"], "unknown verdict 'orphans'"),
        (["--action", "terminate"], "unknown action 'terminate'"),
    ],
)
def test_bad_options_are_usage_errors(report: Path, args: list[str], message: str) -> None:
    done = cli("reap", "plan", "--from", str(report), *args)
    assert done.exit_code == 2 and message in done.output


def test_a_missing_report_is_a_usage_error(tmp_path: Path) -> None:
    done = cli("reap", "plan", "--from", str(tmp_path / "nope.json"))
    assert done.exit_code == 2 and "does not exist" in done.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON"),
        (
            json.dumps({"schema": "cloudguard.audit", "schema_version": 3}),
            "not a cloudguard.audit v1 or v2",
        ),
        (
            json.dumps({"schema": "cloudguard.reap.plan", "schema_version": 1}),
            "not a cloudguard.audit",
        ),
        (json.dumps([]), "a JSON list of 0 entries (an inventory export?), not an object"),
    ],
)
def test_a_report_of_the_wrong_schema_or_malformed_is_refused_with_97(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "audit.json"
    path.write_text(content)
    done = cli("reap", "plan", "--from", str(path))
    assert done.exit_code == 97, done.output
    assert message in done.output


def test_a_malformed_finding_names_the_field(report: Path) -> None:
    document = json.loads(report.read_text())
    document["findings"][0]["resource"]["tags"] = {"task-id": 7}
    write_json(report, document)
    done = cli("reap", "plan", "--from", str(report))
    assert done.exit_code == 97 and "findings[0].resource.tags: tag values must be strings" in (
        done.output
    )


# -- reading a plan back ----------------------------------------------------------------


def _plan_file(report: Path, tmp_path: Path) -> tuple[Path, dict]:
    plan = build_plan(
        json.loads(report.read_text()),
        source=str(report),
        verdicts=[],
        requested_action="deallocate",
        now=NOW,
    )
    document = plan_document(plan)
    return write_json(tmp_path / "plan.json", document), document


def test_a_plan_round_trips(report: Path, tmp_path: Path) -> None:
    path, document = _plan_file(report, tmp_path)
    assert plan_document(load_plan(path)) == document


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["items"][0].update(verdict="suspect"), "verdict 'suspect' is never reapable"),
        (lambda d: d["items"][0].update(action="delete"), "in a plan made for the reversible"),
        (lambda d: d["items"][0].update(action="format-c"), "is not an action for a azure vm"),
        (lambda d: d["items"][1].update(leaked_by=[]), "must name the leaked-by tags"),
        (lambda d: d.update(verdicts=["ok"]), "verdict 'ok' is never reapable"),
        (
            lambda d: d.update(with_dependents=True),
            "with_dependents in a plan that does not delete",
        ),
    ],
    ids=[
        "suspect-item",
        "delete-in-a-deallocate-plan",
        "unknown-action",
        "leaked-without-its-tags",
        "ok-verdict",
        "dependents-in-a-deallocate-plan",
    ],
)
def test_a_hand_edited_plan_cannot_widen_what_reaping_does(
    report: Path, tmp_path: Path, edit, message: str
) -> None:
    path, document = _plan_file(report, tmp_path)
    assert document["items"][1]["verdict"] == "leaked"
    edit(document)
    write_json(path, document)
    try:
        load_plan(path)
    except PlanUsageError as refused:
        assert re.search(message, str(refused)), refused
    else:
        pytest.fail(
            broken("an-edited-plan-is-refused", f"a plan asking for this was read: {message}")
        )


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(schema_version=1), "not a cloudguard.reap.plan v3 or v4 plan"),
        (lambda d: d.update(schema="cloudguard.audit"), "not a cloudguard.reap.plan v3 or v4 plan"),
        (lambda d: d["items"][0].pop("id"), r"items\[0\].id: expected a string"),
        (lambda d: d["items"][0].update(audited_at="yesterday"), "audited_at: 'yesterday'"),
        (lambda d: d.update(items={}), "items: expected a JSON array"),
    ],
)
def test_a_plan_of_the_wrong_schema_or_malformed_is_a_plan_error(
    report: Path, tmp_path: Path, edit, message: str
) -> None:
    path, document = _plan_file(report, tmp_path)
    edit(document)
    write_json(path, document)
    with pytest.raises(PlanError, match=message):
        load_plan(path)


def test_a_plan_from_an_incomplete_audit_warns_that_it_covers_only_what_was_read(
    report: Path,
) -> None:
    document = json.loads(report.read_text())
    assert "failures" in document, "the audit JSON names its unreadable sources"
    plain = cli("reap", "plan", "--from", str(report))
    assert "did not run completely" not in plain.stderr

    document["failures"] = [{"source": "azure subscription s-2", "reason": "HTTP 403"}]
    write_json(report, document)
    done = cli("reap", "plan", "--from", str(report))

    assert done.exit_code == 0, done.output
    assert "the audit did not run completely (1 source(s) unreadable)" in done.stderr

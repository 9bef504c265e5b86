"""The JSON Schemas cloudguard ships, and the documents it writes against them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cloudguard_schemas import validate, validate_lines, validator

from cloudguard.documents import audit_report
from cloudguard.guard import alarm, reach
from cloudguard.schemas import NAMES, schema_id, schema_path


def run_audit_cli(*args: str) -> Any:
    import typer
    from typer.testing import CliRunner

    from cloudguard.cli.audit import register_audit

    app = typer.Typer()
    app.callback()(lambda: None)
    register_audit(app)
    return CliRunner().invoke(app, ["audit", *args])


@pytest.mark.parametrize("name", NAMES)
def test_each_schema_is_draft_2020_12_with_its_urn(name: str) -> None:
    schema = json.loads(schema_path(name).read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == schema_id(name)
    validator(name)  # check_schema: a valid schema


def test_the_reach_log_names_its_schema_without_importing_the_schemas_module() -> None:
    assert schema_id("reach-log") == reach.REACH_LOG_SCHEMA_ID


def test_an_armed_reach_log_carries_schema_in_its_header_only(tmp_path: Path) -> None:
    log = tmp_path / "reach.jsonl"
    alarm.arm(str(log), by="test")
    reach.append(str(log), reach.reach_record(via="az-shim", argv=["az", "login"], target="az"))
    header, record = validate_lines("reach-log", log)
    assert header["$schema"] == schema_id("reach-log")
    assert "$schema" not in record


def test_the_audit_report_names_its_schema(tmp_path: Path) -> None:
    inventory = tmp_path / "inventory.json"
    inventory.write_text("[]")
    document = json.loads(run_audit_cli("-i", str(inventory), "--format", "json").stdout)
    assert validate("audit-report", document)["$schema"] == schema_id("audit-report")


def test_control_a_document_missing_a_field_is_refused_naming_it() -> None:
    with pytest.raises(AssertionError, match="'generated_at' is a required property"):
        validate("audit-report", {"schema": "cloudguard.audit", "schema_version": 1})
    with pytest.raises(AssertionError, match="at /kind"):
        validate("reach-log", {"schema": 1, "kind": "reached", "at": "now"})


def test_control_an_invalid_render_in_a_test_fails_that_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The root conftest checks every in-process render: a report that lost a
    # required field fails the test that produced it.
    head = audit_report.report_head

    def broken(report: object) -> dict[str, object]:
        out = head(report)  # type: ignore[arg-type]
        del out["summary"]
        return out

    monkeypatch.setattr(audit_report, "report_head", broken)
    inventory = tmp_path / "inventory.json"
    inventory.write_text("[]")
    result = run_audit_cli("-i", str(inventory), "--format", "json")
    assert isinstance(result.exception, AssertionError)
    assert "'summary' is a required property" in str(result.exception)


def test_the_schemas_ship_as_package_data() -> None:
    from importlib.resources import files

    shipped = {p.name for p in files("cloudguard.schemas").iterdir()}
    assert {f"{name}.schema.json" for name in NAMES} <= shipped


def test_a_reach_whose_sender_is_unknown_is_still_a_valid_record() -> None:
    # The hard seal's sink records a packet even when it cannot tell the process.
    record = reach.reach_record(via="hard-tcp", argv=[], target="203.0.113.9:443")
    record.update(pid=None, ppid=None, cwd="<unknown>")
    validate("reach-log", record)

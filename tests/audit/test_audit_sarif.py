"""`--format sarif`: SARIF 2.1.0 that the official schema accepts, one result per
orphan, suspect or leaked finding, each with a fingerprint that stays put."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from audit_helpers import run_audit_cli
from jsonschema import Draft4Validator
from report_fleet import fleet_args

OFFICIAL = Path(__file__).parents[1] / "schemas" / "sarif" / "sarif-2.1.0-rtm.5.json"


def _sarif(args: list[str]) -> dict[str, Any]:
    result = run_audit_cli(*args, "--format", "sarif")
    assert result.exit_code == 1, result.stderr
    return json.loads(result.stdout)


def _official_errors(document: Any) -> list[str]:
    validator = Draft4Validator(json.loads(OFFICIAL.read_text()))
    return [
        f"/{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator.iter_errors(document)
    ]


@pytest.fixture
def sarif(tmp_path: Path) -> dict[str, Any]:
    return _sarif(fleet_args(tmp_path))


def test_the_official_sarif_schema_accepts_it(sarif: dict[str, Any]) -> None:
    assert _official_errors(sarif) == []
    assert sarif["version"] == "2.1.0"


def test_control_the_official_schema_refuses_a_broken_result(sarif: dict[str, Any]) -> None:
    broken = json.loads(json.dumps(sarif))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    del broken["runs"][0]["tool"]["driver"]["name"]
    errors = _official_errors(broken)
    assert any("'fatal' is not one of" in e for e in errors)
    assert any("'name' is a required property" in e for e in errors)


def test_one_result_per_orphan_suspect_or_leaked_finding(sarif: dict[str, Any]) -> None:
    (run,) = sarif["runs"]
    by_name = {r["locations"][0]["logicalLocations"][0]["name"]: r for r in run["results"]}
    assert sorted(by_name) == [
        "i-0123456789abcdef0", "vm-leaked", "vm-orphan-1", "vm-orphan-2", "vm-suspect",
    ]  # fmt: skip
    assert by_name["vm-orphan-1"]["ruleId"] == "cloudguard/orphan"
    assert by_name["vm-orphan-1"]["level"] == "error"
    assert by_name["vm-suspect"]["ruleId"] == "cloudguard/suspect"
    assert by_name["vm-suspect"]["level"] == "warning"
    assert by_name["vm-leaked"]["ruleId"] == "cloudguard/leaked"
    rules = run["tool"]["driver"]["rules"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    assert "no-controller-record" in by_name["vm-orphan-1"]["message"]["text"]
    fq = by_name["vm-orphan-2"]["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
    assert fq.startswith("/subscriptions/00000000-0000-0000-0000-0000000000aa/")


def test_fingerprints_are_unique_and_stable_across_audits(tmp_path: Path) -> None:
    first = _sarif(fleet_args(tmp_path / "a"))
    second = _sarif(fleet_args(tmp_path / "b"))  # other files, later clock, same resources

    def prints(document: dict[str, Any]) -> dict[str, str]:
        return {
            r["properties"]["resourceId"]: r["partialFingerprints"]["cloudguardResource/v1"]
            for r in document["runs"][0]["results"]
        }

    assert prints(first) == prints(second)
    assert len(set(prints(first).values())) == len(first["runs"][0]["results"]) == 5


def test_an_unreadable_source_is_a_failed_invocation(tmp_path: Path) -> None:
    args = fleet_args(tmp_path)
    result = run_audit_cli(*args, "--inventory", str(tmp_path / "missing.json"), "-f", "sarif")
    assert result.exit_code == 75
    document = json.loads(result.stdout)
    assert _official_errors(document) == []
    (invocation,) = document["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert "missing.json" in note["message"]["text"]

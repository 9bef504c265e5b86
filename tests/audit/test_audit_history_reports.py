"""SARIF and HTML with the history: SARIF's own `baselineState` (new / unchanged / absent),
the HTML trend of leaks per day and the task ids that keep leaking, in a real browser."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from audit_helpers import run_audit_cli
from headless_chromium import Browser
from jsonschema import Draft4Validator
from report_fleet import fleet_args
from trusted_config import write_trusted

from cloudguard.history.location import open_store
from cloudguard.history.store_records import AuditRun, Observation, ResourceKey

OFFICIAL = Path(__file__).parents[1] / "schemas" / "sarif" / "sarif-2.1.0-rtm.5.json"
ARTEFACTS = Path(__file__).resolve().parents[2] / "test-artefacts"


@pytest.fixture
def nightly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The report fleet's audit arguments, audited as one scope ("nightly")."""
    monkeypatch.chdir(tmp_path)
    write_trusted(tmp_path / "cloudguard.toml", '[history]\nscope = "nightly"\n')
    return fleet_args(tmp_path / "fleet")


def _sarif(args: list[str]) -> dict[str, Any]:
    result = run_audit_cli(*args, "--format", "sarif")
    assert result.exit_code == 1, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    validator = Draft4Validator(json.loads(OFFICIAL.read_text()))
    errors = [e.message for e in validator.iter_errors(document)]
    assert errors == [], errors
    return document


def _states(document: dict[str, Any]) -> dict[str, str | None]:
    return {
        r["locations"][0]["logicalLocations"][0]["name"]: r.get("baselineState")
        for r in document["runs"][0]["results"]
    }


def test_sarif_says_new_then_unchanged_then_absent(nightly: list[str], tmp_path: Path) -> None:
    first = _sarif(nightly)
    assert set(_states(first).values()) == {"new"}
    second = _sarif(nightly)
    assert set(_states(second).values()) == {"unchanged"}

    azure = tmp_path / "fleet" / "az.json"
    vms = json.loads(azure.read_text())
    azure.write_text(json.dumps([vm for vm in vms if vm["name"] != "vm-orphan-1"]))
    third = _sarif(nightly)
    assert _states(third)["vm-orphan-1"] == "absent"
    absent = next(r for r in third["runs"][0]["results"] if r["baselineState"] == "absent")
    before = next(
        r for r in first["runs"][0]["results"]
        if r["locations"][0]["logicalLocations"][0]["name"] == "vm-orphan-1"
    )  # fmt: skip
    assert absent["partialFingerprints"] == before["partialFingerprints"], "the same alert"
    assert (
        absent["level"] == "none"
        and "gone since the last audit (vanished)" in (absent["message"]["text"])
    )


def _seed_a_month_of_leaks() -> None:
    """Thirty nights of the same scope before today, a task id that leaks every night."""
    store = open_store(Path(os.environ["XDG_STATE_HOME"]) / "cloudguard" / "history.sqlite3")
    with store:
        for night in range(30, 0, -1):
            at = datetime.now(UTC) - timedelta(days=night)
            leaked = [
                Observation(ResourceKey("azure", "sub-old", f"/x/vm-old-{night}-{n}"),
                            f"/x/vm-old-{night}-{n}", f"vm-old-{night}-{n}", "vm",
                            "<b>t-old</b>", "orphan", ("no-controller-record",), True, 0.5)
                for n in range(night % 4 + 1)
            ]  # fmt: skip
            kept = Observation(ResourceKey("azure", "sub-old", "/x/vm-kept"), "/x/vm-kept",
                               "vm-kept", "vm", "t-kept", "orphan", (), True, 0.5)  # fmt: skip
            store.record_audit(AuditRun(at, "nightly", True, 1, "USD"), [*leaked, kept])


def test_the_page_shows_the_trend_and_who_keeps_leaking(
    nightly: list[str], tmp_path: Path, browser: Browser
) -> None:
    _seed_a_month_of_leaks()
    report = tmp_path / "report.html"
    result = run_audit_cli(*nightly, "--format", "html", "--output", str(report))
    assert result.exit_code == 1, result.stderr
    page = report.read_text()
    assert "<b>t-old</b>" not in page and "&lt;b&gt;t-old&lt;/b&gt;" in page, "escaped"
    browser.console_errors.clear()
    browser.open(report.as_uri())
    assert browser.console_errors == []
    columns = browser.evaluate(
        "[].map.call(document.querySelectorAll('svg'),function(s){"
        "return [s.getAttribute('aria-label'), s.querySelectorAll('rect').length];})"
    )
    trend = dict(map(tuple, columns))
    assert trend["Orphans and leaked resources, per day"] == 31, "30 nights and today"
    assert trend["Leaked cost observed accruing, per day (USD)"] == 31
    assert "max 12.00 USD" in page, "vm-kept: 24 h a night at 0.50 USD/h"
    offenders = browser.evaluate(
        "[].map.call(document.querySelectorAll('#offenders tbody tr'),"
        "function(r){return [r.cells[0].textContent, r.cells[1].textContent];})"
    )
    assert offenders[0] == ["<b>t-old</b>", "75"], "the task id whose VMs leak every night"
    gone = browser.evaluate("document.body.textContent")
    assert "gone (vanished): vm-old-1-0" in gone
    ARTEFACTS.mkdir(exist_ok=True)
    browser.screenshot(ARTEFACTS / "audit-report-history.png")

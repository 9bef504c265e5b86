"""`--report FORMAT=FILE`: the guard's findings where CI shows them (issue 25, item 10).

`cloudguard run` and `cloudguard check` write the same findings they print as
JSON (the reach-report schema), JUnit, markdown for a job summary and SARIF;
each result sits at the test's file and line when the record says them.
Values from the records (test names, argv) stay inert in every format, as
GitHub renders them (tests/github_markdown.py). A report that cannot be
written is said, and a clean verdict that lost its report is 75.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from cloudguard_schemas import validate
from github_markdown import HOSTILE, gfm, link_targets
from guard_helpers import cloudguard, minimal_env
from named_checks import broken

from cloudguard import exit_codes
from cloudguard.guard import reach

OFFICIAL_SARIF = Path(__file__).parents[1] / "schemas" / "sarif" / "sarif-2.1.0-rtm.5.json"
FORMATS = ("json", "junit", "markdown", "sarif")
TEST = "tests/test_lifecycle.py::TestWorker::test_refuses_without_identity"


def reaching(tmp_path: Path, script: str, *reports: str) -> tuple[Any, dict[str, str]]:
    """`cloudguard run --report F=FILE ... -- sh -c SCRIPT`; each report's text by format."""
    files = {name: tmp_path / f"reach.{name}" for name in reports}
    args = [arg for name, path in files.items() for arg in ("--report", f"{name}={path}")]
    done = cloudguard("run", *args, "--", "sh", "-c", script, env=minimal_env(tmp_path))
    return done, {name: path.read_text() for name, path in files.items() if path.exists()}


def placed(test: str, location: str, phase: str, fixture: str = "") -> str:
    """Shell exports that place the commands after them as the plugin places a test's."""
    where = f"export {reach.TEST_VARIABLE}='{test}' {reach.LOCATION_VARIABLE}='{location}' "
    where += f"{reach.PHASE_VARIABLE}='{phase}' "
    return where + (f"{reach.FIXTURE_VARIABLE}='{fixture}'; " if fixture else "; ")


def test_run_writes_each_format_with_the_test_file_and_line(tmp_path: Path) -> None:
    script = (
        placed(TEST, "tests/test_lifecycle.py:41", "setup", "TestWorker.setup_class")
        + "az vm create --name w1; az account show; exit 0"
    )

    done, reports = reaching(tmp_path, script, *FORMATS)

    assert done.returncode == exit_codes.REACH_REFUSED, done.stderr
    document = validate("reach-report", json.loads(reports["json"]))
    assert (document["exit_code"], document["by"]) == (98, "cloudguard run")
    found = [
        (r["test"], r["file"], r["line"], r["phase"], r["fixture"]) for r in document["reaches"]
    ]
    assert found == [(TEST, "tests/test_lifecycle.py", 41, "setup", "TestWorker.setup_class")] * 2
    sarif = json.loads(reports["sarif"])
    jsonschema.Draft7Validator(json.loads(OFFICIAL_SARIF.read_text())).validate(sarif)
    locations = [r["locations"][0]["physicalLocation"] for r in sarif["runs"][0]["results"]]
    places = [
        (p["artifactLocation"]["uri"], p.get("region", {}).get("startLine")) for p in locations
    ]
    assert places == [("tests/test_lifecycle.py", 41)] * 2, broken(
        "a-sarif-result-is-at-the-tests-line", f"a SARIF result is elsewhere: {places}"
    )
    message = sarif["runs"][0]["results"][0]["message"]["text"]
    assert "during setup, in TestWorker.setup_class" in message, message
    suite = ET.fromstring(reports["junit"]).find("testsuite")
    assert suite is not None and suite.get("failures") == "1"
    (case,) = suite.iter("testcase")
    assert dict(case.attrib) == {
        "classname": "tests.test_lifecycle.TestWorker",
        "name": "test_refuses_without_identity",
        "file": "tests/test_lifecycle.py",
        "line": "41",
    }
    assert (
        "az vm create" in reports["markdown"]
        and "tests/test\\_lifecycle\\.py\\:41" in (reports["markdown"])
    )


def test_a_reach_outside_any_test_is_a_notification_not_a_result_without_a_place(
    tmp_path: Path,
) -> None:
    done, reports = reaching(tmp_path, "aws s3 ls; exit 0", "sarif", "junit")

    assert done.returncode == exit_codes.REACH_REFUSED
    run = json.loads(reports["sarif"])["runs"][0]
    assert run["results"] == [], "a result with no location fails GitHub's whole upload"
    (notification,) = run["invocations"][0]["toolExecutionNotifications"]
    assert "aws-shim -> aws s3 ls" in notification["message"]["text"]
    (case,) = ET.fromstring(reports["junit"]).iter("testcase")
    assert (case.get("classname"), case.get("name")) == ("cloudguard", "outside any test")


def test_a_clean_run_writes_clean_reports(tmp_path: Path) -> None:
    done, reports = reaching(tmp_path, "exit 0", *FORMATS)

    assert done.returncode == 0, done.stderr
    assert validate("reach-report", json.loads(reports["json"]))["reaches"] == []
    assert json.loads(reports["sarif"])["runs"][0]["results"] == []
    assert reports["markdown"].startswith("## cloudguard: no cloud reach recorded")


def test_check_writes_the_reports_of_a_log(tmp_path: Path) -> None:
    log = tmp_path / "reach.jsonl"
    env = minimal_env(tmp_path)
    script = placed(TEST, "tests/test_lifecycle.py:41", "call") + "az login; exit 0"
    cloudguard("run", "--log", str(log), "--", "sh", "-c", script, env=env)
    sarif = tmp_path / "check.sarif"

    done = cloudguard("check", "--log", str(log), "--report", f"sarif={sarif}", env=env)

    assert done.returncode == exit_codes.REACH_REFUSED, done.stderr
    (result,) = json.loads(sarif.read_text())["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 41}


@pytest.mark.parametrize("fmt", ["markdown", "sarif", "junit"])
def test_values_from_the_records_make_no_link_where_github_renders_them(
    tmp_path: Path, fmt: str
) -> None:
    script = "; ".join(
        f"{reach.TEST_VARIABLE}={json.dumps(value)} az account show" for value in HOSTILE.values()
    )

    done, reports = reaching(tmp_path, script + "; exit 0", fmt)

    assert done.returncode == exit_codes.REACH_REFUSED, done.stderr
    if fmt == "markdown":
        shown = [reports[fmt]]
    elif fmt == "sarif":
        shown = [r["message"]["text"] for r in json.loads(reports[fmt])["runs"][0]["results"]]
    else:
        root = ET.fromstring(reports[fmt])
        shown = [v for e in root.iter() for v in (*e.attrib.values(), e.text or "")]
    assert any("attacker" in text for text in shown), f"the values never reached {fmt}"
    made = [target for text in shown for target in link_targets(gfm(text))]
    assert made == [], broken("a-value-makes-no-link", f"it did in the {fmt} report: {made}")


def test_a_report_that_cannot_be_written_is_said_and_a_clean_run_is_75(tmp_path: Path) -> None:
    blocker = tmp_path / "taken"
    blocker.mkdir()  # a directory where the report should go: it cannot be written

    done = cloudguard("run", "--report", f"json={blocker}", "--", "true", env=minimal_env(tmp_path))

    assert done.returncode == exit_codes.DID_NOT_RUN, done.stderr
    assert f"cannot write --report json={blocker}" in done.stderr
    red = cloudguard(
        "run", "--report", f"json={blocker}", "--", "az", "login", env=minimal_env(tmp_path)
    )
    assert red.returncode == exit_codes.REACH_REFUSED, "a red verdict stays red"

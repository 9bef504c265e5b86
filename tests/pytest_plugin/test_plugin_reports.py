"""`--cloudguard-report FORMAT=FILE`: which tests of a suite would touch a real cloud, one report.

The session that gives the verdict writes it: every reach at the test it
failed (its file and line, the phase, the fixture or class setup), and every
test a class setup's refusal failed again although it was recorded for the
class's first test, serially and under xdist (the workers send those on the
test's report, as they send `cloudguard.expect`). A SARIF upload then points
at each test; a malformed request is pytest's usage error.
"""

from __future__ import annotations

import json

import pytest
from cloudguard_schemas import validate
from inner_runs import run_inner
from named_checks import broken
from test_plugin_whereabouts import INI, SUITE, at

from cloudguard import exit_codes

AT_CLASS_SETUP = {
    # (test, line) -> (phase, fixture, again)
    (f"{SUITE}::ReraisedTest::test_a", at("test_a")): ("setup", "ReraisedTest.setUpClass", False),
    (f"{SUITE}::ReraisedTest::test_b", at("test_b")): ("setup", "ReraisedTest.setUpClass", True),
    (f"{SUITE}::ClassSetupTest::test_first", at("test_first")): (
        "setup", "ClassSetupTest.setUpClass", False,
    ),
}  # fmt: skip


@pytest.mark.parametrize("mode", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_the_report_names_each_test_at_its_line_with_the_class_and_the_phase(fenced, mode):
    fenced.makeini(INI)
    sarif, document = fenced.path / "reach.sarif", fenced.path / "reach.json"
    # Under xdist each class runs on one worker, as pytest-xdist's loadscope keeps it.
    scope = ("--dist", "loadscope") if mode else ()

    run = run_inner(
        fenced, "whereabouts", "--cloudguard", *mode, *scope,
        f"--cloudguard-report=sarif={sarif}", f"--cloudguard-report=json={document}",
    )  # fmt: skip

    assert run.result.ret == exit_codes.REACH_REFUSED, run.output[-2000:]
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    found = {}
    for result in results:
        where = result["locations"][0]["physicalLocation"]
        line = where.get("region", {}).get("startLine")
        place = where["artifactLocation"]["uri"] + (f":{line}" if line else "")
        facts = result["properties"]
        found[facts["test"], place] = (facts["phase"], facts["fixture"], facts["again"])
    missing = {k: v for k, v in AT_CLASS_SETUP.items() if found.get(k) != v}
    failed_again = {k: v for k, v in missing.items() if v[2]}  # by a refusal raised again
    assert missing == failed_again, f"the report does not name these at their line: {missing}"
    assert not failed_again, broken(
        "a-test-failed-again-is-in-the-report",
        f"the report does not name these at their line: {failed_again}\n{found}",
    )
    # The reach at import sits at the file being collected.
    assert found["", SUITE] == ("collection", "", False), found
    reaches = validate("reach-report", json.loads(document.read_text()))["reaches"]
    assert sum(1 for r in reaches if r["again"]) == 1, reaches
    assert len(results) == len(reaches), "a reach is missing from the SARIF results"


def test_a_malformed_report_request_is_pytests_usage_error(fenced):
    fenced.makepyfile(test_clean="def test_clean():\n    pass\n")

    result = fenced.runpytest_subprocess("--cloudguard", "--cloudguard-report=sarif")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--cloudguard-report: expected FORMAT=FILE" in result.stderr.str()


def test_a_report_whose_directory_does_not_exist_stops_the_session_before_any_test(
    fenced, monkeypatch
):
    fenced.makepyfile(test_clean="def test_clean():\n    pass\n")
    missing = fenced.path / "no" / "r.json"
    temporary = fenced.path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))  # where the early seal and its log are made

    result = fenced.runpytest_subprocess("--cloudguard", f"--cloudguard-report=json={missing}")

    assert result.ret == exit_codes.DID_NOT_RUN, result.stdout.str()[-2000:]
    assert "is not a directory" in result.stdout.str() + result.stderr.str()
    assert "1 passed" not in result.stdout.str()
    assert list(temporary.iterdir()) == [], broken(
        "a-stopped-session-removes-its-early-seal", "the seal made before the stop was left"
    )

"""Negative controls of the first hour (issue 25): break each promise, its tests go red for it.

Harness: tests/cloudguard_mutants.py. Each mutation undoes one promise in a
copy of the package: the records' whereabouts, the suite's own fakes kept out
of the identity list, the short failure block, cloudguard's hidden frames, a
Ctrl-C's 98, the seal line's `(none)`, a report's place and inertness, the
refusal raised again in the report, the closed pipe, the absolute log, the
offset past the end, an option before `--`, and the doctor's project checks. Each
named test must fail at its named check, and pass on the unbroken code.
"""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

WHERE = "tests/pytest_plugin/test_plugin_whereabouts.py::"
WHEREABOUTS = WHERE + "test_each_record_names_its_phase_its_fixture_and_its_tests_line"
IDENTITY = WHERE + "test_identity_variables_are_what_leaked_not_the_suites_own_fakes"
FIRST_HOUR = "tests/pytest_plugin/test_plugin_first_hour.py::"
REPORTS = "tests/guard/test_reach_reports.py::"
PLUGIN_REPORT = (
    "tests/pytest_plugin/test_plugin_reports.py::"
    "test_the_report_names_each_test_at_its_line_with_the_class_and_the_phase"
)
ODD = "tests/guard/test_guard_odd_inputs.py::"
ODD_ROW = ODD + "test_each_odd_input_gets_one_line_and_its_exit_code"
DOCTOR = (
    "tests/guard/test_doctor_project.py::"
    "test_doctor_says_whether_pytest_would_seal_the_projects_tests"
)

MUTATIONS = [
    Mutation(
        name="a fixture's reach names no fixture",
        module="guard/pytest/where.py",
        original="        os.environ[FIXTURE_VARIABLE] = setup\n",
        broken="        pass\n",
        tests=(WHEREABOUTS,),
        check="a-record-names-its-fixture",
    ),
    Mutation(
        name="records say nothing of where",
        module="guard/reach.py",
        original="    record.update(whereabouts(env))\n",
        broken="",
        tests=(WHEREABOUTS,),
        check="a-record-says-where-it-was-made",
    ),
    Mutation(
        name="the suite's own fakes are listed as identity variables still set",
        module="guard/policy.py",
        original="            if name.startswith(self.exempt) or name in kept:\n",
        broken="            if name.startswith(self.exempt):\n",
        tests=(IDENTITY,),
        check="the-suites-own-fakes-are-no-identity",
    ),
    Mutation(
        name="az's colour switch is an identity variable",
        module="guard/registry.toml",
        original="AZURE_CORE_NO_COLOR = \"az's colour switch, set by azure-identity for the az it "
        'runs; grants nothing"\n',
        broken="",
        tests=(IDENTITY,),
        check="azs-colour-switch-is-no-identity",
    ),
    Mutation(
        name="a reach's failure keeps the whole traceback",
        module="guard/pytest/session_guard.py",
        original="replace=short and bool(reached or refusal)",
        broken="replace=False",
        tests=(
            FIRST_HOUR + "test_five_failing_tests_read_as_five_short_blocks[default]",
            FIRST_HOUR + "test_five_failing_tests_read_as_five_short_blocks[a-projects-native]",
        ),
        check="a-failure-is-one-short-block",
    ),
    Mutation(
        name="the refusing frame is shown",
        module="guard/inprocess/refusal.py",
        original="    __tracebackhide__ = True  # cloudguard's own frames: pytest leaves them out",
        broken="    __tracebackhide__ = False  # cloudguard's own frames: pytest leaves them out",
        tests=(
            FIRST_HOUR
            + "test_an_explicit_traceback_style_keeps_the_traceback_without_cloudguards_frames",
        ),
        check="no-cloudguard-frame-is-shown",
    ),
    Mutation(
        name="a Ctrl-C after a reach exits 2",
        module="guard/pytest/session_guard.py",
        original="            session.exitstatus = exit_codes.REACH_REFUSED\n",
        broken="            if session.exitstatus in (0, 1, 97):\n"
        "                session.exitstatus = exit_codes.REACH_REFUSED\n",
        tests=(FIRST_HOUR + "test_a_ctrl_c_after_a_reach_exits_98_as_the_summary_says",),
        check="a-ctrl-c-after-a-reach-exits-98",
    ),
    Mutation(
        name="a seal that drops nothing prints a bare dropped=",
        module="guard/seal.py",
        original=" or NOTHING_DROPPED\n",
        broken="\n",
        tests=("tests/guard/test_run.py::test_a_seal_that_drops_nothing_says_so_in_its_one_line",),
        check="the-seal-line-says-nothing-was-dropped",
    ),
    Mutation(
        name="SARIF results lose the test's line",
        module="guard/report/sarif.py",
        original="                    **region,\n",
        broken="",
        tests=(REPORTS + "test_run_writes_each_format_with_the_test_file_and_line",),
        check="a-sarif-result-is-at-the-tests-line",
    ),
    Mutation(
        name="SARIF messages are not defanged",
        module="guard/report/sarif.py",
        original="    return sarif_text(inert(text, 2000))\n",
        broken="    return sarif_text(text)\n",
        tests=(
            REPORTS + "test_values_from_the_records_make_no_link_where_github_renders_them[sarif]",
        ),
        check="a-value-makes-no-link",
    ),
    Mutation(
        name="a test failed by a class setup's refusal is left out of the report",
        module="guard/pytest/session_guard.py",
        original="            report.user_properties = [*report.user_properties, "
        "(REFUSED_PROPERTY, refusal.record)]\n",
        broken="",
        tests=(PLUGIN_REPORT + "[serial]", PLUGIN_REPORT + "[xdist]"),
        check="a-test-failed-again-is-in-the-report",
    ),
    Mutation(
        name="a session stopped at configure leaves its early seal behind",
        module="guard/pytest/plugin.py",
        original="            made.abandon(config)\n",
        broken="            pass\n",
        tests=(
            "tests/pytest_plugin/test_plugin_reports.py::"
            "test_a_report_whose_directory_does_not_exist_stops_the_session_before_any_test",
        ),
        check="a-stopped-session-removes-its-early-seal",
    ),
    Mutation(
        name="a closed pipe is an error",
        module="cli/guard.py",
        original="    reader_may_leave()\n",
        broken="    pass\n",
        tests=(ODD + "test_a_reader_that_closed_the_pipe_changes_no_exit_code[check-red]",),
        check="a-closed-pipe-changes-no-exit-code",
    ),
    Mutation(
        name="a relative --log is handed on as it was typed",
        module="cli/guard.py",
        original="    return os.path.abspath(log)\n",
        broken="    return log\n",
        tests=(ODD + "test_a_relative_log_is_recorded_once_and_handed_on_absolute",),
        check="the-log-is-handed-on-absolute",
    ),
    Mutation(
        name="an offset past the end of the log is clean",
        module="documents/reach_log.py",
        original="    if start > offset:  # fail closed",
        broken="    if False:  # fail closed",
        tests=(ODD_ROW + "[check: --since past the end]",),
        check="an-odd-input-gets-its-line-and-exit-code",
    ),
    Mutation(
        name="an option before -- is run as the command",
        module="cli/guard.py",
        original='    if command[0].startswith("-"):',
        broken="    if False:",
        tests=(ODD_ROW + "[run: an unknown option before --]",),
        check="an-odd-input-gets-its-line-and-exit-code",
    ),
    Mutation(
        name="doctor takes any required_plugins",
        module="guard/doctor.py",
        original="    if DISTRIBUTION in required:\n",
        broken="    if True:\n",
        tests=(DOCTOR + "[enabled, not required]",),
        check="doctor-says-whether-pytest-would-seal",
    ),
    Mutation(
        name="doctor sees no -p no:cloudguard",
        module="guard/doctor.py",
        original="        if disabled_by:\n",
        broken="        if False:\n",
        tests=(DOCTOR + "[turned off in addopts]", DOCTOR + "[turned off in PYTEST_ADDOPTS]"),
        check="doctor-says-whether-pytest-would-seal",
    ),
    Mutation(
        name="doctor sees no -o cloudguard=false",
        module="guard/doctor.py",
        original="    if override is not None and override[0].strip().lower() not in _TRUE:\n",
        broken="    if False:\n",
        tests=(
            DOCTOR + "[overridden off in PYTEST_ADDOPTS]",
            DOCTOR + "[overridden off in addopts]",
        ),
        check="doctor-says-whether-pytest-would-seal",
    ),
    Mutation(
        name="doctor's facts ignore the -c pytest is handed",
        module="guard/pytest_facts.py",
        original='        "inifile": early.inifilename,\n',
        broken='        "inifile": None,\n',
        tests=(DOCTOR + "[PYTEST_ADDOPTS picks another file]",),
        check="doctor-says-whether-pytest-would-seal",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_a_first_hour_promise_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)

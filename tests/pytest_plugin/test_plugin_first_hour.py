"""A new team's first run reads as one short block per failing test (issue 25, item 4).

Five failing tests (tests/pytest_plugin/inner/first_hour.py) printed 358
lines before (528 in the issue's own run): each refusal's traceback went
through the SDK into cloudguard's own frames, `refuse()`'s whole source
included, and then the plugin said it all again. Now (85 lines) each test
gets one block: the reach (each record, once), the test (where its code
raised, in one line), the fix. No cloudguard frame under pytest's default
style, a project's own `--tb=native`, or `--tb=long` (which keeps pytest's
traceback, without them). Each reach is listed twice in all: in its test's
failure and in the summary (three on a CI host, where pytest's short
summary prints each failure's message whole). A Ctrl-C after a reach exits 98, as the summary
says.
"""

from __future__ import annotations

import re

import pytest
from inner_runs import run_inner
from named_checks import broken

from cloudguard import exit_codes

# A frame of cloudguard's own package, as pytest prints it: an absolute path, or one relative to
# the inner run's directory (a negative control's copy of the package sits beside it).
OWN_FRAME = re.compile(r"(^|[\s/])cloudguard/[\w/]+\.py:\d+")
FAILING = {
    "test_boto3_unmocked",
    "test_azure_sdk_unmocked",
    "test_az_subprocess",
    "test_socket_to_a_cloud_host",
    "test_boto3_swallowed",
}
LONGEST_BLOCK = 14  # lines: the longest block here (one record, the raise, the advice) is 12
HEADER = re.compile(r"^_{3,} (?:ERROR at \w+ of )?(\S+) _{3,}$")


def blocks(stdout: str) -> dict[str, list[str]]:
    """Each failing test's section of pytest's FAILURES, by test name."""
    found: dict[str, list[str]] = {}
    current = None
    for line in stdout.splitlines():
        header = HEADER.match(line)
        if header:
            current = found.setdefault(header.group(1), [])
        elif line.startswith("====="):
            current = None
        elif current is not None:
            current.append(line)
    return found


def own_frames(output: str) -> list[str]:
    return [line for line in output.splitlines() if OWN_FRAME.search(line)]


@pytest.mark.parametrize(
    ("style", "on_ci"),
    [((), False), (("--tb=native",), False), ((), True)],
    ids=["default", "a-projects-native", "on-a-ci-host"],
)
def test_five_failing_tests_read_as_five_short_blocks(fenced, monkeypatch, style, on_ci):
    if on_ci:
        monkeypatch.setenv("CI", "true")  # pytest's short summary then prints messages whole
    run = run_inner(fenced, "first_hour", "--cloudguard", *style, "-k", "not interrupted")

    assert run.result.ret == exit_codes.REACH_REFUSED, run.output[-2000:]
    red = {name for name, verdict in run.verdicts.items() if verdict.outcome != "passed"}
    assert red == FAILING, run.output[-3000:]
    assert not own_frames(run.output), broken(
        "no-cloudguard-frame-is-shown", f"cloudguard's own frames shown: {own_frames(run.output)}"
    )
    failures = blocks(run.result.stdout.str())
    assert set(failures) == FAILING, failures.keys()
    for name, block in failures.items():
        text = "\n".join(block)
        assert text.count("To make the test hermetic:") == 1, broken(
            "a-failure-is-one-short-block", f"{name} said the fix twice:\n{text}"
        )
        assert len(block) <= LONGEST_BLOCK, broken(
            "a-failure-is-one-short-block", f"{name}'s failure is {len(block)} lines:\n{text}"
        )
    # Where a test raised, one line says where in its code, and what (not a traceback).
    assert "The refusal (CloudReachRefused) was raised at test_first_hour.py:" in "\n".join(
        failures["test_boto3_unmocked"]
    )
    raised = "\n".join(failures["test_az_subprocess"])
    assert "Then the test failed at test_first_hour.py:" in raised, raised
    assert "assert done.returncode == 0" in raised and "AssertionError: " in raised, raised
    # Each reach twice in all: in its test's failure and in cloudguard's summary at the end
    # (on a CI host pytest's own short summary repeats each failure's message once more).
    summary = run.result.stdout.str().split("cloud reach(es) refused and recorded ===")[1]
    summary = summary.split("\n=====")[0]  # cloudguard's section, to pytest's next heading
    described = [line for line in summary.splitlines() if " reached `" in line]
    assert len(described) == len(FAILING), summary
    listed = 3 if on_ci else 2
    for line in described:
        head = line.split(" (pid ")[0]
        assert run.output.count(head) == listed, f"{head!r} listed {run.output.count(head)} times"


def test_an_explicit_traceback_style_keeps_the_traceback_without_cloudguards_frames(fenced):
    run = run_inner(
        fenced, "first_hour", "--cloudguard", "--tb=long", "-k", "boto3_unmocked or socket"
    )

    assert run.verdicts["test_boto3_unmocked"].outcome == "failed"
    output = run.result.stdout.str()
    assert "botocore/endpoint.py" in output, "pytest's own traceback was replaced"
    assert not own_frames(output), broken(
        "no-cloudguard-frame-is-shown", f"cloudguard's own frames shown: {own_frames(output)}"
    )
    assert output.count("cloudguard: this test reached a real cloud") == 2, output[-3000:]


def test_a_ctrl_c_after_a_reach_exits_98_as_the_summary_says(fenced):
    run = run_inner(fenced, "first_hour", "--cloudguard", "-k", "interrupted")

    assert "KeyboardInterrupt" in run.output
    said = re.search(r"\(exit status (\d+); pytest's own: (\d+)\)", run.output)
    assert said is not None, run.output[-2000:]
    assert (run.result.ret, said.groups()) == (exit_codes.REACH_REFUSED, ("98", "2")), broken(
        "a-ctrl-c-after-a-reach-exits-98",
        f"exit {run.result.ret}, the summary says {said.group(0)}",
    )


INTERNAL_ERROR_AFTER_A_TEST = """
def pytest_runtest_logfinish(nodeid, location):
    raise RuntimeError("a plugin's own bug")
"""


def test_an_internalerror_after_a_reach_still_says_the_reaches_and_where_the_log_is(fenced):
    run = run_inner(
        fenced, "first_hour", "--cloudguard", "-k", "socket_to_a_cloud_host",
        conftest=INTERNAL_ERROR_AFTER_A_TEST,
    )  # fmt: skip

    assert "INTERNALERROR" in run.output and run.result.ret == exit_codes.REACH_REFUSED
    said = re.search(r"reach log kept: (\S+) \(exit status 98; pytest's own: (\d+)\)", run.output)
    assert said is not None and said.group(2) == "3", broken(
        "an-internalerror-says-the-summary",
        f"no reach summary after an INTERNALERROR: {run.output[-2000:]}",
    )
    assert "1 cloud reach(es) refused and recorded" in run.output

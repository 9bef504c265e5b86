"""The proof: every channel's reach fails its own test by name, and only its own test."""

from __future__ import annotations

import re

import pytest
from inner_runs import REACHING, SEAL_LINE, proof_problems, run_inner
from named_checks import broken

from cloudguard import exit_codes


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist-2"])
def test_each_reach_fails_its_test_and_only_its_test(fenced, workers):
    run = run_inner(fenced, "reaches", "--cloudguard", *workers)

    problems = proof_problems(run)
    assert not problems, broken(list(problems), "\n".join(f"{k}: {v}" for k, v in problems.items()))
    assert run.result.ret == exit_codes.REACH_REFUSED
    # One seal line per invocation: under xdist the controller seals, workers inherit.
    assert len(run.seal_lines()) == 1, run.output
    summary = run.result.stdout.str()
    assert f"cloudguard: {len(REACHING)} cloud reach(es) refused and recorded" in summary
    for named in REACHING.values():
        assert named in summary


def test_failure_message_names_what_where_and_how_to_be_hermetic(fenced):
    run = run_inner(fenced, "reaches", "--cloudguard", "-k", "boto3_swallowed")

    text = run.verdicts["test_boto3_swallowed"].text
    assert "cloudguard: this test reached a real cloud: botocore -> s3.amazonaws.com" in text
    assert "argv: GET https://s3.amazonaws.com/" in text
    assert "refused before any packet left and recorded" in text
    assert "moto's @mock_aws" in text and "endpoint_url" in text
    # No bypass is advertised: the only ways out are structural (a mock, a loopback fake).
    bypass_words = r"\b(disable\w*|allow\w*|bypass\w*|skip\w*|marker|opt.out)\b"
    advertised = re.findall(bypass_words, text, re.IGNORECASE)
    assert advertised == []


def test_hermetic_tests_keep_working(fenced):
    run = run_inner(fenced, "coexist", "--cloudguard")

    assert {name: v.outcome for name, v in run.verdicts.items()} == {
        "test_moto_decorator": "passed",
        "test_moto_server_mode": "passed",
        "test_fake_azure_sync": "passed",
        "test_fake_azure_async": "passed",
        "test_guards_were_installed": "passed",
    }, run.output
    assert run.result.ret == exit_codes.CLEAN
    assert "cloud reach(es) refused" not in run.output


SOCKET_CALLS = {
    "test_connect_ex_swallowed": "socket -> 169.254.169.254:80",
    "test_gethostbyname_swallowed": "socket -> management.azure.com",
    "test_gethostbyname_ex_swallowed": "socket -> sts.amazonaws.com",
}


def test_fixture_xfail_teardown_async_and_credential_fetches(fenced):
    run = run_inner(fenced, "edges", "--cloudguard")
    v = run.verdicts

    assert v["test_expect_declares"].outcome == "passed", v["test_expect_declares"].text
    assert v["test_expect_needs_a_record"].outcome == "passed"
    # expect() covers exactly the reach it names; the other one still fails the test.
    assert v["test_expect_is_narrow"].outcome == "failed"
    assert "socket -> s3.amazonaws.com:443" in v["test_expect_is_narrow"].text
    assert "169.254.169.254" not in v["test_expect_is_narrow"].text.split("To make")[0]
    assert v["test_xfail_reach"].outcome == "failed"
    assert "socket -> 169.254.169.254:80" in v["test_xfail_reach"].text
    assert v["test_teardown_reach"].outcome == "error"
    assert "socket -> s3.amazonaws.com:443" in v["test_teardown_reach"].text
    # Unswallowed: the test fails once, with the refusal and the reach both named.
    assert v["test_unswallowed"].outcome == "failed"
    assert "CloudReachRefused" in v["test_unswallowed"].text
    assert "metadata.google.internal" in v["test_unswallowed"].text
    assert "azure-core -> management.azure.com" in v["test_async_azure_swallowed"].text
    assert "botocore -> 169.254.169.254" in v["test_imds_credentials_swallowed"].text
    assert "azure-core -> 169.254.169.254" in v["test_identity_token_swallowed"].text
    assert v["test_clean_last"].outcome == "passed"
    # One logical call, one record: the refusal is not retried by botocore or azure-core.
    for name in (
        "test_async_azure_swallowed",
        "test_imds_credentials_swallowed",
        "test_identity_token_swallowed",
    ):
        assert "Each attempt (1) was refused" in v[name].text, v[name].text
    # Every socket entry point the guard patches refuses and records on its own.
    unguarded = [
        name
        for name, reach in SOCKET_CALLS.items()
        if v[name].outcome != "failed" or reach not in v[name].text
    ]
    assert not unguarded, broken(
        [f"{name} is red naming its reach" for name in unguarded],
        "\n".join(f"{name}: {v[name].outcome} {v[name].text[:300]}" for name in unguarded),
    )
    summary = run.result.stdout.str()
    expected = "expected by its test (cloudguard.expect): socket reached `169.254.169.254:80`"
    assert expected in summary
    assert run.result.ret == exit_codes.REACH_REFUSED


def test_sdk_refusals_are_recorded_once_per_call(fenced):
    run = run_inner(fenced, "reaches", "--cloudguard", "-k", "boto3_swallowed or azure_swallowed")
    for name in ("test_boto3_swallowed", "test_azure_swallowed"):
        assert "Each attempt (1) was refused" in run.verdicts[name].text


def test_seal_line_appears_once_and_only_when_enabled(fenced):
    enabled = run_inner(fenced, "reaches", "--cloudguard", "-k", "clean_after_boto3")
    assert [line.startswith(SEAL_LINE) for line in enabled.seal_lines()] == [True]

    inert = run_inner(fenced, "reaches", "-k", "clean_after_boto3")
    assert inert.seal_lines() == []
    assert inert.result.ret == exit_codes.CLEAN

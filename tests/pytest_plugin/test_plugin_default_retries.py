"""One logical call, one record, with the SDKs' DEFAULT retry settings (behind the fence).

tests/pytest_plugin/inner/reaches.py turns retries off, so it cannot see a
refusal that an SDK retries; this suite keeps botocore's and azure-core's
defaults, and requires exactly one record per swallowed call.
"""

from __future__ import annotations

from inner_runs import run_inner


def test_a_refusal_is_recorded_once_per_call_with_default_retries(fenced):
    run = run_inner(fenced, "default_retries", "--cloudguard")

    for name, via in (
        ("test_boto3_default_retries", "botocore"),
        ("test_azure_default_retries", "azure-core"),
    ):
        verdict = run.verdicts[name]
        assert verdict.outcome == "failed", f"{name} {verdict.outcome}"
        assert f"{via} -> " in verdict.text, verdict.text[:600]
        assert "Each attempt (1) was refused" in verdict.text, (
            f"{name}: one call was recorded more than once: {verdict.text[:600]}"
        )


# The control: a refusal raised as an error the SDKs retry (as a naive guard would raise it:
# a connection refused at the socket), with nothing deduplicated per logical call.
RETRYABLE_REFUSAL = """
from cloudguard.guard.inprocess import refusal, socket_guard

def refuse(**kwargs):
    kwargs["already_recorded"] = False
    try:
        refusal.refuse(**kwargs)
    except refusal.CloudReachRefused:
        raise ConnectionRefusedError(111, "refused") from None

socket_guard.refuse = refuse
"""


def test_control_a_retryable_refusal_is_recorded_once_per_attempt(fenced):
    run = run_inner(fenced, "default_retries", "--cloudguard", conftest=RETRYABLE_REFUSAL)

    for name in ("test_boto3_default_retries", "test_azure_default_retries"):
        text = run.verdicts[name].text
        assert "Each attempt (1) was refused" not in text and "Each attempt (" in text, text[:600]

"""One logical call, one record, with the SDKs' DEFAULT retry settings (behind the fence).

tests/pytest_plugin/inner/reaches.py turns retries off, so it cannot see a
refusal that an SDK retries; this suite keeps botocore's and azure-core's
defaults, and requires exactly one record per swallowed call, and the refusal
handed to the caller as itself. A policy that retries every error reaches the
socket again inside one call: still one record. Negative controls (the
per-call dedupe, botocore's unwrap, each broken alone):
tests/pytest_plugin/test_inprocess_guard_controls.py.
"""

from __future__ import annotations

from inner_runs import run_inner
from named_checks import broken

CALLS = {
    "test_boto3_default_retries": "botocore",
    "test_azure_default_retries": "azure-core",
    "test_azure_policy_retrying_everything": "azure-core",
}


def test_a_refusal_is_recorded_once_per_call_with_default_retries(fenced):
    run = run_inner(fenced, "default_retries", "--cloudguard")

    for name, via in CALLS.items():
        verdict = run.verdicts[name]
        assert verdict.outcome == "failed", f"{name} {verdict.outcome}"
        assert f"{via} -> " in verdict.text, verdict.text[:600]
        caught = (fenced.path / f"caught-{name}").read_text()
        assert caught == "CloudReachRefused", broken(
            f"{name} is handed the refusal itself", f"{name}'s caller caught {caught}"
        )
        assert "Each attempt (1) was refused" in verdict.text, broken(
            f"{name} is one record", f"{name}: one call was recorded more than once: {verdict.text}"
        )

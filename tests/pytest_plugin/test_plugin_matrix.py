"""The mocking tools teams use: each correctly mocked test green, each unmocked twin red.

Judged where bytes would leave: a mock that answers above the socket is
hermetic and never recorded, whichever layer it patches (botocore's events,
requests' adapter, the connection class, aiohttp's session, httpx's
transport). Its twin makes the same call unmocked and swallows the failure;
it must still be red, naming its reach. Serially and under xdist alike.
The fence lies beneath every inner process: nothing but loopback is reachable.
"""

from __future__ import annotations

import pytest
from inner_runs import INNER, InnerRun, run_inner
from named_checks import broken

BOTO3 = "botocore reached `sts.us-east-1.amazonaws.com`"
AZURE = "azure-core reached `management.azure.com`"
HTTPX = "socket reached `management.azure.com:443`"
GCS = "google-auth reached `storage.googleapis.com`"
GCS_TOKEN = "google-auth reached `oauth2.googleapis.com`"
GCE_METADATA = "google-auth reached `169.254.169.254`"
TWINS = {
    "test_twin_moto_decorator": BOTO3,
    "test_twin_moto_server": BOTO3,
    "test_twin_botocore_stubber": BOTO3,
    "test_twin_placebo_recording": BOTO3,
    "test_twin_unittest_mock": BOTO3,
    "test_twin_vcrpy_boto3": BOTO3,
    "test_twin_pytest_recording_boto3": BOTO3,
    "test_twin_responses_azure": AZURE,
    "test_twin_requests_mock_azure": AZURE,
    "test_twin_vcrpy_azure": AZURE,
    "test_twin_pytest_recording_azure": AZURE,
    "test_twin_aioresponses_azure_async": AZURE,
    "test_twin_responses_google": GCS_TOKEN,
    "test_twin_requests_mock_google": GCS,
    "test_twin_google_auth_default": GCE_METADATA,
    "test_twin_anonymous_loopback": GCS,
    "test_twin_storage_emulator": GCS,
    "test_twin_respx": HTTPX,
    "test_twin_pytest_httpx": HTTPX,
}
MOCKED = tuple(name.replace("test_twin_", "test_mocked_") for name in TWINS)


def matrix_problems(run: InnerRun) -> dict[str, str]:
    """Every way the matrix falls short, by inner test ("mocked NAME" / "twin NAME"); {} when
    it holds."""
    problems = {}
    for name in MOCKED:
        verdict = run.verdicts.get(name)
        if verdict is None or verdict.outcome != "passed":
            text = verdict.text[:600] if verdict else "did not run"
            problems[f"mocked {name}"] = f"{verdict.outcome if verdict else ''} {text}"
    for name, named in TWINS.items():
        verdict = run.verdicts.get(name)
        if verdict is None or verdict.outcome != "failed" or named not in verdict.text:
            text = verdict.text[:400] if verdict else "did not run"
            problems[f"twin {name}"] = f"is not red naming {named}: {text}"
    return problems


def test_the_matrix_is_complete():
    source = (INNER / "matrix.py").read_text()
    assert all(f"def {name}(" in source for name in (*MOCKED, *TWINS))


@pytest.mark.parametrize("mode", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_each_mocked_test_is_green_and_each_twin_red(fenced, mode):
    run = run_inner(fenced, "matrix", "--cloudguard", *mode)

    problems = matrix_problems(run)
    assert not problems, broken(
        list(problems),
        "\n".join(f"{k}: {p[:300]}" for k, p in problems.items()) + "\n" + run.output[-2000:],
    )


def test_without_the_plugin_every_twin_passes(fenced):
    """The control: the twins are red because of cloudguard, not because they are broken."""
    run = run_inner(fenced, "matrix", "-p", "no:cloudguard", "-k", "twin")

    assert {name: v.outcome for name, v in run.verdicts.items()} == dict.fromkeys(TWINS, "passed")

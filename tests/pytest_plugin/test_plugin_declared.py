"""Only the ambient is sealed: what the suite declares is its own and survives.

pytest-env's `env =` settings and values a conftest.py sets while it is
imported come after the seal (the plugin seals in a wrapper around
pytest_load_initial_conftests), so they survive and are listed as kept;
what the shell exported is dropped. The seal's sentinel credentials fill
only what the suite left unset (a pytest-env `D:` default wins). The same
rule serially and under xdist.
"""

from __future__ import annotations

import pytest
from inner_runs import run_inner
from named_checks import broken

INI = """
[pytest]
env =
    AZURE_SUBSCRIPTION_ID=00000000-0000-0000-0000-0000000000aa
    AWS_DEFAULT_REGION=eu-west-1
    D:AWS_ACCESS_KEY_ID=suite-own-fake
"""
CONFTEST = """
import os
os.environ["AZURE_ACCESS_TOKEN"] = "fake_token"  # a suite's own fake, set at import
"""


@pytest.mark.parametrize("mode", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_the_suites_declared_settings_survive_and_are_listed_as_kept(fenced, monkeypatch, mode):
    monkeypatch.setenv("AZURE_CLIENT_SECRET", "ambient-secret-0001")
    monkeypatch.setenv("AWS_PROFILE", "dev")
    ca = fenced.path / "corporate-ca.pem"
    monkeypatch.setenv("AWS_CA_BUNDLE", str(ca))
    monkeypatch.setenv("CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", str(ca))
    fenced.makeini(INI)

    run = run_inner(fenced, "declared", "--cloudguard", *mode, conftest=CONFTEST)

    outcomes = {n: v.outcome for n, v in run.verdicts.items()}
    assert outcomes == {
        "test_pytest_env_settings_survive": "passed",
        "test_conftest_settings_survive": "passed",
        "test_the_ambient_identity_is_sealed": "passed",
        "test_trust_settings_are_kept": "passed",
        "test_sentinels_fill_only_what_the_suite_left_unset": "passed",
    }, broken(
        [f"inner {n} passes" for n, o in outcomes.items() if o != "passed"], run.output[-3000:]
    )
    (line,) = run.seal_lines()
    kept = "AWS_ACCESS_KEY_ID,AWS_DEFAULT_REGION,AZURE_ACCESS_TOKEN,AZURE_SUBSCRIPTION_ID"
    assert line.endswith(f" kept={kept}")
    dropped = line.split("dropped=", 1)[1].split(" ", 1)[0].split(",")
    assert {"AZURE_CLIENT_SECRET", "AWS_PROFILE"} <= set(dropped)
    assert "AWS_CA_BUNDLE" not in dropped
    assert "ambient-secret-0001" not in run.output

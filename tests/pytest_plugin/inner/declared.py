"""Inner suite: what the suite declares survives the seal; what the shell gave it does not.

Run with pytest-env `env =` settings in the ini and a conftest.py that sets
a variable while it is imported, under a shell that exports identity and
trust settings.
"""

import os


def test_pytest_env_settings_survive():
    assert os.environ["AZURE_SUBSCRIPTION_ID"] == "00000000-0000-0000-0000-0000000000aa"
    assert os.environ["AWS_DEFAULT_REGION"] == "eu-west-1"


def test_conftest_settings_survive():
    assert os.environ["AZURE_ACCESS_TOKEN"] == "fake_token"


def test_the_ambient_identity_is_sealed():
    assert "AZURE_CLIENT_SECRET" not in os.environ
    assert "AWS_PROFILE" not in os.environ


def test_trust_settings_are_kept():
    assert os.environ["AWS_CA_BUNDLE"].endswith("corporate-ca.pem")
    assert os.environ["CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE"].endswith("corporate-ca.pem")


def test_sentinels_fill_only_what_the_suite_left_unset():
    assert os.environ["AWS_ACCESS_KEY_ID"] == "suite-own-fake"  # pytest-env `D:` default
    assert os.environ["AWS_SECRET_ACCESS_KEY"] == "cloudguard-sentinel-not-a-credential"

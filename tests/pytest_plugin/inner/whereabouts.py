# ruff: noqa: SIM105  (try/except/pass is the point: code under test that swallows the failure)
"""Inner suite: reaches made at import, in class setup and teardown, in fixtures, in a test.

Each reach names a host of its own, so the outer test can tell its record from
the others: the record must say the phase, the fixture (or the class setup)
and the test's file and line. Every reach is behind the fence.
"""

import os
import socket
import subprocess
import unittest

import pytest


def reach(host):
    assert getattr(socket, "cloudguard_test_fence", False), "test fence missing: not calling out"
    try:
        socket.getaddrinfo(host, 443)
    except Exception:
        pass


reach("collection.amazonaws.com")  # while the file is imported: collection


class ClassSetupTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        reach("setup-class.management.azure.com")

    @classmethod
    def tearDownClass(cls):
        reach("teardown-class.management.azure.com")

    def test_first(self):
        pass

    def test_second(self):
        pass


class TestXunit:
    @classmethod
    def setup_class(cls):
        reach("setup-xunit.amazonaws.com")

    def test_in_xunit_class(self):
        pass


@pytest.fixture(scope="module")
def shared():
    reach("module-fixture-setup.amazonaws.com")
    yield
    reach("module-fixture-teardown.amazonaws.com")


@pytest.fixture
def cli():
    # A subprocess a fixture starts records the fixture too.
    subprocess.run(["az", "group", "list"], capture_output=True, timeout=30)
    return "cli"


def test_uses_shared(shared):
    pass


def test_uses_cli(cli):
    pass


def test_own_reach():
    reach("call.amazonaws.com")


def test_identity_vars_name_only_what_leaked(monkeypatch):
    # AZURE_SUBSCRIPTION_ID is the suite's own (pytest-env): kept, never "still set".
    assert os.environ["AZURE_SUBSCRIPTION_ID"] == "00000000-0000-0000-0000-0000000000aa"
    monkeypatch.setenv("AZURE_CLIENT_SECRET", "set-by-the-test-after-the-seal")
    monkeypatch.setenv("AZURE_CORE_NO_COLOR", "true")  # az's colour switch: no identity
    subprocess.run(["az", "account", "show"], capture_output=True, timeout=30)
    reach("identity.management.azure.com")


class ReraisedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Not swallowed: pytest raises it again for each test of the class.
        socket.getaddrinfo("raised.management.azure.com", 443)

    def test_a(self):
        pass

    def test_b(self):
        pass


def test_last():
    pass

"""One suite, judged in every mode: the same tests red, the same exit, each reach listed once."""

import contextlib
import os
import socket
import subprocess
import sys

ISOLATED_CHILD = """
import socket
try:
    socket.create_connection(("198.51.100.7", 80), timeout=2)
except OSError:
    pass
"""


def test_az_subprocess():
    subprocess.run(["az", "account", "show"], capture_output=True)


def test_socket_swallowed():
    with contextlib.suppress(Exception):
        socket.create_connection(("management.azure.com", 443), timeout=2)


def test_isolated_child():
    # `python -I`: no PYTHONPATH, so no in-process guard; only the hard seal hears it.
    subprocess.run([sys.executable, "-I", "-c", ISOLATED_CHILD], capture_output=True)


def test_the_suites_own_settings_are_its_own():
    declared = os.environ.get("CLOUDGUARD_MATRIX_DECLARED")
    if declared:
        assert os.environ["AWS_ACCESS_KEY_ID"] == declared


def test_clean():
    pass

# ruff: noqa: SIM105  (try/except/pass is the point: code under test that swallows the failure)
"""Inner suite (run by pytester): one test per channel reaches a cloud and swallows the error.

Each reaching test is followed by a clean one, which must pass: a reach never
leaks into the next test's verdict. Every reach is made through the real SDK
at a real cloud host name; the fence (tests/pytest_plugin/fence) guarantees
that, guard or no guard, nothing but loopback is reachable.
"""

import socket
import subprocess
import sys
import textwrap
import time


def require_fence():
    # Never make a reaching call unless the offline fence is beneath it.
    assert getattr(socket, "cloudguard_test_fence", False), "test fence missing: not calling out"


class FakeCredential:
    def get_token(self, *scopes, **kwargs):
        from azure.core.credentials import AccessToken

        return AccessToken("fake-token", int(time.time()) + 3600)


def test_boto3_swallowed():
    require_fence()
    import boto3
    from botocore.config import Config

    client = boto3.client(
        "s3",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=1),
    )
    try:
        client.list_buckets()
    except Exception:
        pass  # the hazard: code under test that swallows the failure


def test_clean_after_boto3():
    pass


def test_azure_swallowed():
    require_fence()
    from azure.mgmt.compute import ComputeManagementClient

    client = ComputeManagementClient(
        FakeCredential(), "00000000-0000-0000-0000-000000000000", retry_total=0
    )
    try:
        list(client.virtual_machines.list_all())
    except Exception:
        pass


def test_clean_after_azure():
    pass


def test_socket_swallowed():
    require_fence()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(0.5)
    try:
        sock.connect(("169.254.169.254", 80))
    except Exception:
        pass
    finally:
        sock.close()


def test_clean_after_socket():
    pass


def test_az_subprocess():
    # Only under the seal: `az` is then the refusing shim (this machine has no real `az`).
    subprocess.run(["az", "account", "show"], capture_output=True, timeout=30)


def test_clean_after_az():
    pass


CHILD = textwrap.dedent(
    """
    import socket, sys
    if not getattr(socket, "cloudguard_test_fence", False):
        sys.exit("test fence missing in the child: not calling out")
    import boto3
    from botocore.config import Config
    client = boto3.client(
        "sts", region_name="us-east-1", aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=1),
    )
    try:
        client.get_caller_identity()
    except Exception:
        pass
    print("child done")
    """
)


def test_python_child_boto3(tmp_path):
    script = tmp_path / "provider.py"
    script.write_text(CHILD)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "child done" in done.stdout


def test_clean_after_python_child():
    pass

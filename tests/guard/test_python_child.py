"""A Python child of a sealed run: its guards, installed by the seal's sitecustomize, record
by the seal's own rules.

Nothing hands a child its seal's policy (which variables are identity, which
values the seal itself set): its sitecustomize gives the guards a way to
rebuild it from the live seal, asked on the first refusal. The record then
names the identity variables still set, as a shim's does, by name only.

The run is in a loopback-only network namespace (`unshare -rn`): the refusal
comes before any lookup, and nothing could leave even if it did not.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from guard_helpers import minimal_env, reaches
from named_checks import broken

# A lookup of a cloud host, swallowed as code under test would: the socket guard refuses it.
REACH = """
import socket
try:
    socket.getaddrinfo("management.azure.com", 443)
except Exception:
    pass
"""
# The child sets an identity variable after the seal dropped the shell's (as a suite might).
WITH_A_SECRET = 'AZURE_CLIENT_SECRET=v-0401 exec "$0" -c "$1"'


def test_a_python_childs_record_names_the_identity_variables_still_set(tmp_path: Path) -> None:
    log = tmp_path / "reach.jsonl"
    run = subprocess.run(
        [
            *("unshare", "-rn"),
            *(sys.executable, "-m", "cloudguard", "run", "--log", str(log), "--"),
            *("sh", "-c", WITH_A_SECRET, sys.executable, REACH),
        ],
        env=minimal_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert run.returncode == 98, run.stderr
    (record,) = reaches(log)
    assert record["via"] == "socket" and record["target"] == "management.azure.com:443"
    assert record["identity_vars"] == ["AZURE_CLIENT_SECRET"], broken(
        "a-child-names-identity-variables",
        f"a Python child's record named no identity variable by the seal's rules: {record}",
    )
    assert "v-0401" not in log.read_text() and "v-0401" not in run.stderr

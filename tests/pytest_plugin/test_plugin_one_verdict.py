"""One verdict in every mode: serial or `-n 2`, the plugin alone, under `cloudguard run`, under
`cloudguard run --hard`, with and without settings the suite declares itself (pytest-env).

The same tests are red (a `python -I` child only where the hard seal hears it), the
session ends 98, no worker says the inherited seal does not hold, and each reach is
listed once in the failure of the test that made it and once at the end. Every mode
runs in a loopback-only network namespace the test makes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from inner_runs import INNER
from named_checks import broken

from cloudguard import exit_codes

IP = shutil.which("ip", path="/usr/sbin:/sbin:/usr/bin:/bin") or "ip"
REACHES = {
    "test_az_subprocess": "az-shim reached `az account show`",
    "test_socket_swallowed": "socket reached `management.azure.com:443`",
}
HARD_ONLY = {"test_isolated_child": "hard-tcp reached `198.51.100.7:80`"}
DECLARED_INI = (
    "[pytest]\nenv =\n    AWS_ACCESS_KEY_ID=declared-fake\n"
    "    CLOUDGUARD_MATRIX_DECLARED=declared-fake\n"
)
MODES = {
    "plugin": [],
    "run": ["run", "--"],
    "run-hard": ["run", "--hard", "--"],
}


def run_mode(
    where: Path, mode: str, workers: list[str], declared: bool
) -> tuple[int, dict[str, bool], str]:
    (where / "test_one_verdict.py").write_text((INNER / "one_verdict.py").read_text())
    (where / "pytest.ini").write_text(DECLARED_INI if declared else "[pytest]\n")
    junit = where / "junit.xml"
    pytest_argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
                   f"--junitxml={junit}", *workers, "test_one_verdict.py"]  # fmt: skip
    if mode == "plugin":
        command = [*pytest_argv, "--cloudguard"]
    else:
        command = [sys.executable, "-m", "cloudguard", *MODES[mode], *pytest_argv]
    result = subprocess.run(
        ["unshare", "-rn", "sh", "-c", f'{IP} link set lo up; exec "$@"', "sh", *command],
        cwd=where, env=_env(where), capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    red = {
        case.get("name", ""): any(c.tag in ("failure", "error") for c in case)
        for case in ET.parse(junit).getroot().iter("testcase")
    }
    return result.returncode, red, result.stdout + result.stderr


def _env(where: Path) -> dict[str, str]:
    home = where / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME": str(home),
           "LANG": "C.UTF-8"}  # fmt: skip
    if os.environ.get("PYTHONPATH"):  # the negative controls run us from a mutant copy
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


@pytest.mark.parametrize("declared", [False, True], ids=["as-is", "declared-settings"])
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
@pytest.mark.parametrize("mode", list(MODES))
def test_one_verdict_in_every_mode(
    tmp_path: Path, mode: str, workers: list[str], declared: bool
) -> None:
    code, red, output = run_mode(tmp_path, mode, workers, declared)

    reaching = {**REACHES, **(HARD_ONLY if mode == "run-hard" else {})}
    assert {name for name, is_red in red.items() if is_red} == set(reaching), (
        f"other tests are red than the ones that reached:\n{output}"
    )
    assert code == exit_codes.REACH_REFUSED, f"exit {code}, not 98:\n{output}"
    assert "does not hold" not in output, broken(
        "a-session-trusts-its-seal", f"a session did not trust its seal:\n{output}"
    )
    for line in reaching.values():
        assert output.count(line) == 2, f"{line!r} listed {output.count(line)} times:\n{output}"

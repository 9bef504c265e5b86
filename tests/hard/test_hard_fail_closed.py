"""`--hard` where the namespaces cannot be made: exit 75, one line naming the cause and the fix,
and the command never runs (never the soft seal instead). A sink that dies mid-run is 97."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hard_helpers import IP_TOOL, hard_env, hard_run

# Namespaces made by the test, in which one capability the hard seal needs is taken away.
NO_USER_NAMESPACES = "echo 0 > /proc/sys/user/max_user_namespaces"
NOT_A_TUN_DEVICE = "mount --bind /dev/null /dev/net/tun"


def broken_host(tmp_path: Path, breakage: str, *args: str) -> str:
    """Run `cloudguard ARGS` in a namespace where `breakage` was done; its stderr and code."""
    env = hard_env(tmp_path)
    result = subprocess.run(
        ["unshare", "-rnm", "sh", "-c", f'{IP_TOOL} link set lo up; {breakage}; exec "$@"', "sh",
         sys.executable, "-m", "cloudguard", *args],
        env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False,
    )  # fmt: skip
    return f"exit {result.returncode}\n{result.stderr}"


def lines_naming(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("cloudguard:")]


def test_no_user_namespaces_is_75_naming_the_sysctl_and_nothing_runs(tmp_path: Path) -> None:
    output = broken_host(tmp_path, NO_USER_NAMESPACES, "run", "--hard", "--", "touch", "RAN")

    assert output.startswith("exit 75\n"), output
    assert "user.max_user_namespaces=0" in output, f"the cause was not named:\n{output}"
    assert "sysctl -w user.max_user_namespaces=" in output, f"no way to enable it:\n{output}"
    assert len(lines_naming(output)) == 1, output
    assert not (tmp_path / "RAN").exists(), "the command ran without the hard seal"


def test_a_device_that_is_not_a_tun_is_75_naming_it_and_nothing_runs(tmp_path: Path) -> None:
    output = broken_host(tmp_path, NOT_A_TUN_DEVICE, "run", "--hard", "--", "touch", "RAN")

    assert output.startswith("exit 75\n"), output
    assert "refused to make a TUN device" in output, f"the cause was not named:\n{output}"
    assert "CLOUDGUARD_AMBIENT_SEAL" in output and len(lines_naming(output)) == 1, output
    assert not (tmp_path / "RAN").exists(), "the command ran without the hard seal"


def test_a_missing_ip_tool_is_75_naming_the_package(tmp_path: Path) -> None:
    output = broken_host(tmp_path, "export PATH=/nonexistent", "run", "--hard", "--", "true")

    assert output.startswith("exit 75\n") and "install iproute2" in output, output


def test_a_sink_killed_before_the_command_ends_is_97(tmp_path: Path) -> None:
    run = hard_run(tmp_path, "sh", "-c", "kill -9 $PPID; sleep 0.2")

    assert run.returncode == 97, run.output
    assert "the sink stopped before the command ended" in run.stderr, run.output


def test_doctor_says_whether_hard_mode_is_available_and_why_not(tmp_path: Path) -> None:
    available = broken_host(tmp_path, "true", "doctor")
    unavailable = broken_host(tmp_path, NO_USER_NAMESPACES, "doctor")

    assert "hard seal (run --hard) available here" in available, available
    assert "hard seal (run --hard) not available here: user namespaces are disabled" in (
        unavailable
    ), unavailable


def test_a_reach_the_sink_cannot_record_fails_the_run_closed(tmp_path: Path) -> None:
    script = 'rm "$CLOUDGUARD_REACH_LOG"; curl -sS -m 5 http://198.51.100.7/; exit 0'
    run = hard_run(tmp_path, "sh", "-c", script)

    assert run.returncode == 97, run.output
    assert "the sink could not record a reach" in run.stderr, run.output

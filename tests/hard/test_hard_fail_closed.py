"""`--hard` where the namespaces cannot be made: exit 75, one line naming the cause and the fix,
and the command never runs (never the soft seal instead). A sink that dies mid-run is 97."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from hard_helpers import IP_TOOL, hard_env
from named_checks import broken
from pause_sink import supervisor

from cloudguard.guard.hard import launch

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
    assert "user.max_user_namespaces=0" in output, broken(
        "the-sysctl-is-named", f"the cause was not named:\n{output}"
    )
    assert "sysctl -w user.max_user_namespaces=" in output, f"no way to enable it:\n{output}"
    assert len(lines_naming(output)) == 1, output
    assert not (tmp_path / "RAN").exists(), "the command ran without the hard seal"


def test_a_device_that_is_not_a_tun_is_75_naming_it_and_nothing_runs(tmp_path: Path) -> None:
    output = broken_host(tmp_path, NOT_A_TUN_DEVICE, "run", "--hard", "--", "touch", "RAN")

    assert output.startswith("exit 75\n"), output
    assert "refused to make a TUN device" in output, broken(
        "the-tun-refusal-is-named", f"the cause was not named:\n{output}"
    )
    assert "CLOUDGUARD_AMBIENT_SEAL" in output and len(lines_naming(output)) == 1, output
    assert not (tmp_path / "RAN").exists(), "the command ran without the hard seal"


def test_a_supervisor_killed_from_outside_before_the_command_ends_is_97(tmp_path: Path) -> None:
    # The command cannot name its supervisor (test_verdict_integrity.py); whatever else kills
    # it (the host, the OOM killer) leaves reaches unrecorded from then on: never a clean run.
    started = tmp_path / "started"
    run = subprocess.Popen(
        ["unshare", "-rn", "sh", "-c", f'{IP_TOOL} link set lo up; exec "$@"', "sh",
         sys.executable, "-m", "cloudguard", "run", "--hard", "--",
         "sh", "-c", f"touch {started}; sleep 30"],
        env=hard_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        supervisor = _wait_for_supervisor(run.pid, started)
        os.kill(supervisor, signal.SIGKILL)
        _, stderr = run.communicate(timeout=60)
    finally:
        run.kill()
    assert run.returncode == 97, broken("a-dead-sink-is-97", f"exit {run.returncode}:\n{stderr}")
    assert "the sink stopped before the command ended" in stderr, stderr


def _wait_for_supervisor(root: int, started: Path) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if started.exists():
            return supervisor(root)
        time.sleep(0.05)
    raise AssertionError("the hard seal's supervisor never started its command")


def test_what_the_supervisor_relayed_and_the_run_received_must_agree() -> None:
    ended = {"started": "0", "code": "0"}

    missing = _refusal({**ended, "recorded": "3"}, received=2)
    lost = _refusal({**ended, "recorded": "1", "lost": "the pipe broke"}, received=1)

    assert missing is not None, broken(
        "relayed-count-checked", "a record lost between the seal and the run passed"
    )
    assert missing.exit_code == 97 and "relayed 3 record(s) but the run received 2" in str(missing)
    assert lost is not None, broken(
        "lost-record-reported", "a record the sink could not relay passed"
    )
    assert lost.exit_code == 97 and "could not record a reach" in str(lost)
    assert _refusal({**ended, "recorded": "2"}, received=2) is None  # the control


def _refusal(status: dict[str, str], *, received: int) -> launch.HardSealError | None:
    try:
        launch._verdict(dict(status), 0, received=received)
    except launch.HardSealError as error:
        return error
    return None


def test_doctor_says_whether_hard_mode_is_available_and_why_not(tmp_path: Path) -> None:
    available = broken_host(tmp_path, "true", "doctor")
    unavailable = broken_host(tmp_path, NO_USER_NAMESPACES, "doctor")

    assert "hard seal (run --hard) available here" in available, available
    assert "hard seal (run --hard) not available here: user namespaces are disabled" in (
        unavailable
    ), unavailable

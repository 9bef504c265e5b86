"""`cloudguard run` and `cloudguard check` end to end, through the real command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from guard_helpers import child, cloudguard, git, minimal_env, reaches, seal_lines
from named_checks import broken

from cloudguard.guard import late_imports, reach


def test_a_clean_command_keeps_its_own_exit_code_and_prints_one_seal_line(tmp_path: Path) -> None:
    env = minimal_env(tmp_path, AZURE_CLIENT_ID="planted", AWS_PROFILE="prod", KEEP_ME="yes")

    result = cloudguard("run", "--", *child("import sys; sys.exit(3)"), env=env)

    assert result.returncode == 3, result.stderr
    assert seal_lines(result.stderr) == [
        "CLOUDGUARD_AMBIENT_SEAL dropped=AWS_PROFILE,AZURE_CLIENT_ID"
    ], broken(
        "seal-line-names-the-dropped",
        f"the seal line does not name exactly the planted identity variables: {result.stderr}",
    )


def test_a_seal_that_drops_nothing_says_so_in_its_one_line(tmp_path: Path) -> None:
    result = cloudguard("run", "--", "true", env=minimal_env(tmp_path))

    assert result.returncode == 0, result.stderr
    assert seal_lines(result.stderr) == ["CLOUDGUARD_AMBIENT_SEAL dropped=(none)"], broken(
        "the-seal-line-says-nothing-was-dropped",
        f"not one line saying nothing was dropped: {seal_lines(result.stderr)}",
    )


def test_a_reach_makes_the_run_red_and_names_what_was_reached(tmp_path: Path) -> None:
    log = tmp_path / "reach.jsonl"

    result = cloudguard(
        "run",
        "--log",
        str(log),
        "--",
        "sh",
        "-c",
        'az vm list --resource-group pilot; echo "az exit $?"; exit 0',
        env=minimal_env(tmp_path),
    )

    assert "az exit 98" in result.stdout, broken(
        "az-is-the-refusing-shim", f"az was not refused: {result.stdout}{result.stderr}"
    )
    recorded = reaches(log)
    assert [(r["via"], r["argv"][:3]) for r in recorded] == [("az-shim", ["az", "vm", "list"])], (
        broken("reach-recorded", f"the reach was not recorded: {recorded}\n{result.stderr}")
    )
    assert result.returncode == 98, broken(
        "run-red-on-reach", f"run did not go red on a recorded reach: {result.stderr}"
    )
    assert "az-shim reached `az vm list`" in result.stderr
    assert "the command itself exited 0" in result.stderr


def test_the_refusing_provider_is_bound_and_refuses_loudly(tmp_path: Path) -> None:
    log = tmp_path / "reach.jsonl"
    script = '$FM_WORKER_PROVIDER_COMMAND spawn --size Standard_D4as_v6; echo "provider exit $?"'

    result = cloudguard(
        "run", "--log", str(log), "--", "sh", "-c", script, env=minimal_env(tmp_path)
    )

    assert "provider exit 98" in result.stdout, broken(
        "provider-refuses", f"the provider call was not refused: {result.stdout}{result.stderr}"
    )
    assert result.returncode == 98, result.stderr
    assert "no real provider is bound" in result.stderr
    assert "FM_WORKER_PROVIDER_COMMAND=/path/to/fake-provider" in result.stderr
    (record,) = reaches(log)
    assert record["via"] == "provider" and record["target"] == "provider spawn"


def test_a_test_that_names_its_own_provider_and_fakebin_wins(tmp_path: Path) -> None:
    fakebin = tmp_path / "fakebin"
    fakebin.mkdir()
    for name in ("az", "fake-provider"):
        tool = fakebin / name
        tool.write_text(f"#!/bin/sh\necho {name} fake ok\n")
        tool.chmod(0o755)
    script = (
        f'PATH="{fakebin}:$PATH" az vm list && '
        f"FM_WORKER_PROVIDER_COMMAND={fakebin}/fake-provider "
        "sh -c '$FM_WORKER_PROVIDER_COMMAND spawn'"
    )

    result = cloudguard("run", "--", "sh", "-c", script, env=minimal_env(tmp_path))

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["az fake ok", "fake-provider fake ok"]


def test_a_command_that_does_not_exist_is_127_and_named(tmp_path: Path) -> None:
    result = cloudguard("run", "--", "no-such-command-xyz", env=minimal_env(tmp_path))

    assert result.returncode == 127
    assert "command not found: no-such-command-xyz" in result.stderr


def test_nested_runs_share_the_outer_log_and_both_go_red(tmp_path: Path) -> None:
    log = tmp_path / "outer.jsonl"
    inner = [sys.executable, "-m", "cloudguard", "run", "--", "aws", "s3", "ls"]

    result = cloudguard("run", "--log", str(log), "--", *inner, env=minimal_env(tmp_path))

    assert result.returncode == 98, result.stderr
    assert result.stderr.count("aws-shim reached `aws s3 ls`") == 2  # the inner and the outer check
    assert len(reaches(log)) == 1
    assert len(seal_lines(result.stderr)) == 2  # one line per invocation


def test_an_existing_armed_log_is_continued_and_only_new_records_are_judged(tmp_path: Path) -> None:
    log = tmp_path / "reach.jsonl"
    env = minimal_env(tmp_path)
    assert cloudguard("run", "--log", str(log), "--", "az", "login", env=env).returncode == 98

    again = cloudguard("run", "--log", str(log), "--", "true", env=env)

    assert again.returncode == 0, again.stderr
    assert len(reaches(log)) == 1, "earlier evidence is kept"


def test_a_log_path_that_is_not_a_reach_log_is_refused_not_clobbered(tmp_path: Path) -> None:
    precious = tmp_path / "notes.txt"
    precious.write_text("not a log\n")

    result = cloudguard("run", "--log", str(precious), "--", "true", env=minimal_env(tmp_path))

    assert result.returncode == 97
    assert "cannot arm the reach log" in result.stderr
    assert precious.read_text() == "not a log\n"


def test_a_temporary_log_is_removed_when_clean_and_kept_when_red(tmp_path: Path) -> None:
    env = minimal_env(tmp_path, TMPDIR=str(tmp_path))
    assert cloudguard("run", "--", "true", env=env).returncode == 0
    assert not list(tmp_path.glob("cloudguard-reach-*.jsonl"))

    red = cloudguard("run", "--", "az", "account", "show", env=env)

    assert red.returncode == 98
    (kept,) = tmp_path.glob("cloudguard-reach-*.jsonl")
    assert f"recorded in {kept}" in red.stderr
    assert not list(tmp_path.glob("cloudguard-seal-*")), "the seal directory is removed"


def test_ctrl_c_reaches_the_command_and_the_check_still_runs(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    script = (
        "import signal, subprocess, sys, time, pathlib\n"
        "def on_int(*_):\n"
        "    subprocess.call(['az', 'logout'])\n"
        "    sys.exit(130)\n"
        "signal.signal(signal.SIGINT, on_int)\n"
        f"pathlib.Path({str(ready)!r}).touch()\n"
        "time.sleep(30)\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "cloudguard", "run", "--", *child(script)],
        env=minimal_env(tmp_path),
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: we play the terminal
    )
    deadline = time.monotonic() + 20
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
    _, stderr = process.communicate(timeout=30)

    assert process.returncode == 98, stderr
    assert "az-shim reached `az logout`" in stderr
    assert "the command itself exited 130" in stderr


def test_sigterm_to_cloudguard_is_forwarded_to_the_command(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    script = f"import pathlib, time; pathlib.Path({str(ready)!r}).touch(); time.sleep(30)"
    process = subprocess.Popen(
        [sys.executable, "-m", "cloudguard", "run", "--", *child(script)],
        env=minimal_env(tmp_path),
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 20
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=30)

    assert process.returncode == 128 + signal.SIGTERM


def test_check_reports_clean_red_and_unreadable_logs(tmp_path: Path, armed_log: Path) -> None:
    clean = cloudguard("check", "--log", str(armed_log))
    assert clean.returncode == 0 and "armed and clean" in clean.stderr

    reach.append(
        str(armed_log),
        reach.reach_record(
            via="botocore",
            argv=[],
            target="ec2.us-east-1.amazonaws.com",
            environ={"CLOUDGUARD_TEST": "t::x"},
        ),
    )
    red = cloudguard("check", "--log", str(armed_log))
    assert red.returncode == 98, broken(
        "check-red-on-reach", f"check did not go red on a recorded reach: {red.stderr}"
    )
    assert "botocore reached `ec2.us-east-1.amazonaws.com` from test t::x" in red.stderr

    later = cloudguard("check", "--log", str(armed_log), "--since", str(armed_log.stat().st_size))
    assert later.returncode == 0

    unarmed = tmp_path / "unarmed.jsonl"
    unarmed.write_text("")
    assert cloudguard("check", "--log", str(unarmed)).returncode == 97
    missing = cloudguard("check", "--log", str(tmp_path / "missing.jsonl"))
    assert missing.returncode == 97 and "does not exist" in missing.stderr


def test_a_shim_run_with_a_scrubbed_environment_still_reaches_the_runs_keeper(
    tmp_path: Path,
) -> None:
    # `env -i` drops CLOUDGUARD_KEEPER and the log: the shim knows its keeper by heart.
    result = cloudguard(
        "run", "--log", str(tmp_path / "reach.jsonl"), "--",
        "sh", "-c", 'env -i "$CLOUDGUARD_SEAL_DIR/bin/az" account show; exit 0',
        env=minimal_env(tmp_path),
    )  # fmt: skip

    assert result.returncode == 98, broken(
        "scrubbed-shim-kept", f"a scrubbed shim's reach was not kept: {result.stderr}"
    )
    assert "az-shim reached `az account show`" in result.stderr


# -- nothing is imported after the command started (cloudguard.guard.late_imports) ---------

# Runs `python -m cloudguard ARGS` and writes, to LATE, every module first imported once the
# command started: when the command is started (a soft run's), or when the hard seal is
# given it.
WATCH_IMPORTS = """
import json, runpy, sys
late_file, sys.argv = sys.argv[1], ["cloudguard", *sys.argv[2:]]
started = []
def snapshot():
    if not started:
        started.append(set(sys.modules))
def hook(event, args):
    if event == "subprocess.Popen" and list(args[1])[:2] == ["sh", "-c"]:  # not git's
        snapshot()
sys.addaudithook(hook)
from cloudguard.guard.hard import launch
given = launch.HardSeal.run
def run(self, *args, **kwargs):
    snapshot()
    return given(self, *args, **kwargs)
launch.HardSeal.run = run
try:
    runpy.run_module("cloudguard", run_name="__main__")
finally:
    late = sorted(set(sys.modules) - started[0]) if started else ["<the command never ran>"]
    with open(late_file, "w") as handle:
        json.dump(late, handle)
"""
REPORT_FORMATS = ("json", "junit", "markdown", "sarif")
# A reach whose text needs escaping, an in-process guard's reach, a tracked file changed, a
# process left running: the paths of the messages and findings after the command too.
AFTER_SCRIPT = (
    "az \"$(printf '\\342\\200\\256evil')\" 2>/dev/null; echo changed >> tracked.txt; "
    f"{sys.executable} -c \"import socket; socket.getaddrinfo('management.azure.com', 443)\" "
    "2>/dev/null; sh -c 'setsid sleep 300.4 >/dev/null 2>&1 &'; sleep 0.2; exit 0"
)


@pytest.mark.parametrize("hard", [False, True], ids=["soft", "hard"])
def test_nothing_is_imported_after_the_command_started(tmp_path: Path, hard: bool) -> None:
    wrapper, late = tmp_path / "watch_imports.py", tmp_path / "late.json"
    wrapper.write_text(WATCH_IMPORTS)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "tracked.txt").write_text("as committed\n")
    git(checkout, "init", "-q")
    git(checkout, "add", ".")
    git(checkout, "commit", "-qm", "the checkout")
    reports = [f"{name}={tmp_path / ('report.' + name)}" for name in REPORT_FORMATS]
    command = [
        *("unshare", "-rn", sys.executable, str(wrapper), str(late), "run"),
        *(["--hard"] if hard else []),
        *(f"--report={request}" for request in reports),
        *("--log", str(tmp_path / "reach.jsonl"), "--", "sh", "-c", AFTER_SCRIPT),
    ]
    result = subprocess.run(
        command,
        env=minimal_env(tmp_path),
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=120,
    )

    written = [name for name in REPORT_FORMATS if (tmp_path / f"report.{name}").is_file()]
    assert (result.returncode, written) == (98, list(REPORT_FORMATS)), broken(
        "the-run-is-red-and-reported",
        f"exit {result.returncode}, reports {written}:\n{result.stderr}",
    )
    assert "tracked-write" in result.stderr and "management.azure.com" in result.stderr, (
        result.stderr
    )
    if not hard:  # under --hard its pid namespace ends with the command
        assert "stopped 1 process(es) the command left running" in result.stderr, result.stderr
    imported = json.loads(late.read_text())
    assert imported == [], broken(
        "nothing-imported-after-the-command",
        f"imported after the command started: {imported}",
    )


def test_an_import_after_the_command_started_is_refused_and_never_runs(tmp_path: Path) -> None:
    # A module the command could have planted where modules are loaded from.
    planted = tmp_path / "planted_by_the_command.py"
    ran = tmp_path / "it-ran"
    planted.write_text(f"open({str(ran)!r}, 'w').close()\n")
    sys.path.insert(0, str(tmp_path))
    try:
        with late_imports.refused():
            try:
                import planted_by_the_command
            except ImportError as error:
                refusal = str(error)
            else:
                refusal = ""
        refused_unrun = not ran.exists()
        import planted_by_the_command  # noqa: F401  the control: outside, it does import
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("planted_by_the_command", None)

    assert refused_unrun and "imports nothing after the command started" in refusal, broken(
        "a-late-import-is-refused", f"the late import was not refused ({refusal!r})"
    )
    assert ran.exists()

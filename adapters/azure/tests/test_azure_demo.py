"""`cloudguard demo` end to end, as a user runs it: a separate process, real output."""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from cloudguard_azure import demo
from named_checks import broken


@pytest.mark.slow
def test_demo_reports_the_orphan_refuses_a_reach_and_leaves_nothing() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from cloudguard_azure.demo import main; raise SystemExit(main())"],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "250", "HOME": "/nonexistent"},
    )
    out = done.stdout

    assert done.returncode == 1, done.stderr  # the audit's code: an orphan was found
    assert "exited 1" in out
    # The finding's table row, or (narrower than every column) its block: the head line and
    # the indented lines under it.
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if demo.INCIDENT_VM in line and "orphan" in line)
    row = lines[at]
    for line in lines[at + 1 :]:
        if not line.startswith(" "):
            break
        row += " " + line.strip()
    for reason in ("no-controller-record", "fixture-task-id", "unknown-generation"):
        assert reason in row
    assert "Standard_D4as_v6" in row and "running" in row
    assert re.search(r"\d+\.\d+ USD", row)  # priced: per hour and accrued
    # The sealed run refused `az` and said so.
    assert "sealed run exited 98" in out
    assert "refused `az vm list`" in out  # in order, after the audit
    # Nothing is left behind.
    (root,) = re.findall(r"under (/\S+cloudguard-demo-\w+) is removed", out)
    assert not Path(root).exists()


def test_a_production_install_needs_no_test_dependency():
    from importlib.metadata import requires

    needs = requires("cloudguard-azure") or []
    trustme = [r for r in needs if r.startswith("trustme")]
    # Only through the `fake` extra (the fake ARM and the demo); the control: it is there.
    assert trustme and all(re.search(r"extra == [\"']fake[\"']", r) for r in trustme), needs


def test_without_the_fake_extra_the_demo_says_what_to_install(monkeypatch, capsys):
    from cloudguard_azure.fake_arm import FakeArmUnavailable, serve

    monkeypatch.setitem(sys.modules, "trustme", None)  # as if the extra were not installed
    with (
        pytest.raises(FakeArmUnavailable, match=r"pip install 'cloudguard-azure\[fake\]'"),
        serve(),
    ):
        pass
    assert demo.main() == 75
    assert "cloudguard-azure[fake]" in capsys.readouterr().err


def _serving(process: subprocess.Popen[str]) -> list[str]:
    """What `demo --serve` printed up to its Ctrl-C line (it is running then)."""
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        lines.append(line.rstrip("\n"))
        if line.startswith("Press Ctrl-C"):
            return lines
    raise AssertionError(f"demo --serve ended before serving: {lines}")


def _as_run_here(command: str) -> list[str]:
    """A printed `cloudguard ...` command, run with this interpreter's cloudguard."""
    argv = shlex.split(command)
    assert argv[0] == "cloudguard", command
    return [sys.executable, "-m", "cloudguard", *argv[1:]]


@pytest.mark.slow
def test_demo_serve_leaves_a_fleet_to_audit_and_reap_until_ctrl_c(tmp_path: Path) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "COLUMNS": "250",
        "HOME": str(tmp_path),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "cloudguard", "demo", "--serve"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        start_new_session=True,  # its own process group: what it leaves running is seen
    )
    try:
        printed = _serving(process)
        commands = [line.removeprefix("  $ ") for line in printed if line.startswith("  $ ")]
        audit, audit_json, plan, apply = (_as_run_here(c) for c in commands)
        (endpoint,) = re.findall(r"serving HTTPS on (https://127\.0\.0\.1:\d+)", printed[0])

        # Run from a project whose own cloudguard.toml names another tag: the printed commands
        # name the demo's own file, so nothing of the project's joins them.
        project = tmp_path / "project"
        project.mkdir()
        (project / "cloudguard.toml").write_text('[audit]\ntask-tag = "not-our-tag"\n')
        found = subprocess.run(
            audit, capture_output=True, text=True, env=env, timeout=300, cwd=project
        )
        rows = [line for line in found.stdout.splitlines() if demo.INCIDENT_VM in line]
        assert found.returncode == 1 and rows and "orphan" in rows[0], broken(
            "the-printed-audit-finds-the-orphan", f"{found.stdout}{found.stderr}"
        )
        assert "--management-endpoint" in audit and "--ca-bundle" in audit  # as printed
        # The reaper's commands, in order: the JSON audit, the plan, the plan's dry run.
        for argv, code in ((audit_json, 1), (plan, 0), (apply, 0)):
            done = subprocess.run(
                argv, capture_output=True, text=True, env=env, timeout=300, cwd=project
            )
            assert done.returncode == code, f"{argv}: {done.stdout}{done.stderr}"
        assert demo.INCIDENT_VM in done.stdout + done.stderr  # the dry run would deallocate it
    finally:
        process.send_signal(signal.SIGINT)
        rest = process.communicate(timeout=60)[0]

    assert process.returncode == 0, broken("ctrl-c-stops-it-cleanly", rest)
    (root,) = re.findall(r"stopped after \d+ requests; (/\S+) is removed", rest)
    assert not Path(root).exists()
    with pytest.raises(ProcessLookupError):  # nothing of its process group is left running
        os.killpg(process.pid, 0)
    with pytest.raises(OSError):  # and nothing listens where the fake did
        socket.create_connection(("127.0.0.1", int(endpoint.rsplit(":", 1)[1])), timeout=5)


def test_the_readmes_checkout_install_line_installs_what_the_demo_needs() -> None:
    # The demo's fake ARM needs the `fake` extra (trustme): a line installing the adapter from
    # the checkout without it leaves `cloudguard demo` at 75. (Run for real: a fresh venv,
    # `pip install ./ './adapters/azure[fake]'`, then `cloudguard demo` exits 1.)
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text(encoding="utf-8")
    from_checkout = re.findall(r"pip install \./ ([^`\n#]+)", readme)
    assert from_checkout, "the README has no install line from the checkout"
    for line in from_checkout:
        assert "'./adapters/azure[fake]'" in line, line

"""`cloudguard demo` end to end, as a user runs it: a separate process, real output."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from cloudguard_azure import demo


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

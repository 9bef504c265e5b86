"""`cloudguard history ...` and `cloudguard ack`: the store asked and told from the command
line, with its store named by [history] as the audit names it."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cli.cli_helpers import cloudguard
from history_helpers import audit, observed, vm_id
from named_checks import broken
from trusted_config import write_trusted

from cloudguard.history.location import open_store


@pytest.fixture
def seeded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Three nights in the default store; the working directory has no cloudguard.toml."""
    monkeypatch.chdir(tmp_path)
    path = Path(os.environ["XDG_STATE_HOME"]) / "cloudguard" / "history.sqlite3"
    with open_store(path) as store:
        for n in range(3):
            audit(store, n, [observed("vm-a"), observed(f"vm-{n}", task_id="smoke-b2")])
    return path


def _json(*args: str) -> list[dict[str, Any]]:
    done = cloudguard("history", *args, "--format", "json")
    assert done.exit_code == 0, done.output
    document = json.loads(done.stdout)
    assert (document["schema"], document["schema_version"]) == ("cloudguard.history", 1)
    items: list[dict[str, Any]] = document["items"]
    return items


def test_the_history_answers_as_tables_and_json(seeded: Path) -> None:
    assert [run["new"] for run in _json("runs")] == [1, 1, 2]
    (timeline,) = _json("resource", vm_id("vm-a"))
    assert [e["change"] for e in timeline["entries"]] == ["new", "still", "still"]
    assert [o["task_id"] for o in _json("offenders")] == ["smoke-b2", "cloud-noenv-c7"]
    assert [m["month"] for m in _json("cost")] == ["2025-05", "2025-06"]
    table = cloudguard("history", "resource", vm_id("vm-a")).stdout
    assert "first seen 2025-05-30 02:00 UTC" in table and "orphan" in table
    nowhere = cloudguard("history", "resource", "/nowhere")
    assert "no resource /nowhere in the history" in nowhere.stderr
    assert nowhere.exit_code == 1  # no answer (as grep's 1); usage is 2


def test_history_resource_takes_a_name_or_the_end_of_an_id_and_lists_an_ambiguous_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = Path(os.environ["XDG_STATE_HOME"]) / "cloudguard" / "history.sqlite3"
    other = "00000000-0000-0000-0000-0000000000bb"
    with open_store(path) as store:
        audit(store, 0, [observed("vm-leak-01"), observed("vm-two"),
                         observed("vm-two", account=other)])  # fmt: skip

    for asked in ("vm-leak-01", "VM-LEAK-01", "virtualMachines/vm-leak-01"):
        done = cloudguard("history", "resource", asked)
        assert done.exit_code == 0 and "vm-leak-01 (azure" in done.stdout, broken(
            "a-name-finds-its-resource", f"{asked}: exit {done.exit_code}, {done.output}"
        )
    ambiguous = cloudguard("history", "resource", "vm-two")
    assert ambiguous.exit_code == 2, ambiguous.output
    assert "vm-two names 2 resources: give one's whole id" in ambiguous.stderr
    assert vm_id("vm-two") in ambiguous.stderr and vm_id("vm-two", other) in ambiguous.stderr
    assert cloudguard("history", "resource", "leak-01").exit_code == 1  # no partial names


def test_ack_records_and_revokes_and_refuses_what_is_no_acknowledgement(seeded: Path) -> None:
    vm = vm_id("vm-a")
    soon = (datetime.now(UTC) + timedelta(days=3)).date().isoformat()
    for args, problem in [
        ((vm, "--until", soon), "an acknowledgement needs --reason"),
        ((vm, "--reason", "r", "--until", "2020-01-01"), "already past"),
        ((vm, "--reason", "r", "--until", "2999-01-01"), "more than a year ahead"),
        ((vm, "--reason", "r", "--until", "soon"), "not a date"),
        ((vm, "--revoke", "--reason", "r"), "--revoke ends acknowledgements"),
    ]:
        done = cloudguard("ack", *args)
        assert done.exit_code == 2 and problem in done.output, (args, done.output)
    assert _json("acks") == []
    made = cloudguard("ack", vm, "--reason", "kept", "--until", soon, "--owner", "ops")
    assert made.exit_code == 0, made.output
    (ack,) = _json("acks")
    assert (ack["owner"], ack["until"], ack["source"]) == ("ops", soon, "cloudguard ack")
    assert cloudguard("ack", vm, "--revoke").exit_code == 0
    assert _json("acks") == []


def test_a_store_that_cannot_be_read_is_75_naming_it(seeded: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.sqlite3"
    broken.write_bytes(b"\x00not sqlite" * 500)
    write_trusted(tmp_path / "cloudguard.toml", f'[history]\npath = "{broken}"\n')
    soon = (datetime.now(UTC) + timedelta(days=3)).date().isoformat()
    for args in (("history", "runs"), ("ack", "x", "--reason", "r", "--until", soon)):
        done = cloudguard(*args)
        assert done.exit_code == 75 and f"history store {broken}: damaged" in done.output
    write_trusted(tmp_path / "cloudguard.toml", "[history]\nbusy-timeout = 5\n")
    assert cloudguard("history", "runs").exit_code == 97

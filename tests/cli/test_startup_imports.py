"""An audit's start-up loads what the audit asked for, not every command's (issue 34 item 1).

The nightly audit pays its start-up every night; an empty export's audit was
0.58 s, mostly imports. What it no longer loads, each a named check (its
controls: test_startup_imports_controls.py):

- typer's pydantic coercion, for values that are strings as argv gives them
  (cloudguard.cli.lean_coercion), which gives every value as typer would;
- the other commands (only the command named is registered);
- the history store with --no-history, and the webhooks' sender when none is named.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import pytest
import typer
import typer.core
from named_checks import broken
from typer.testing import CliRunner

# Writes the names in sys.modules to a file at exit, and runs the command as typed.
_RUN = """
import atexit, json, runpy, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
sys.argv[0] = "cloudguard"
runpy.run_module("cloudguard", run_name="__main__", alter_sys=True)
"""


def _imported(tmp_path: Path, *args: str) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    modules = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(modules), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")},
    )
    return set(json.loads(modules.read_text())), done


def _loaded(modules: set[str], package: str) -> list[str]:
    return sorted(m for m in modules if m == package or m.startswith(package + "."))


def test_an_audit_without_history_loads_neither_pydantic_nor_other_commands(
    tmp_path: Path,
) -> None:
    (tmp_path / "empty.json").write_text("[]")
    modules, done = _imported(
        tmp_path, "audit", "--inventory", "empty.json", "--no-history", "--format", "json"
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["schema"] == "cloudguard.audit"  # it did audit

    assert not _loaded(modules, "pydantic"), broken(
        "a-value-needs-no-pydantic", f"typer's pydantic loaded: {_loaded(modules, 'pydantic')}"
    )
    commands = ("reap", "history", "init", "adapters")
    others = [m for m in commands if f"cloudguard.cli.{m}" in modules]
    assert not others, broken("only-the-named-command-registers", f"also registered: {others}")
    store = [m for m in ("cloudguard.history.location", "cloudguard.history.store") if m in modules]
    assert not store, broken("no-history-loads-no-store", f"--no-history loaded {store}")
    assert "cloudguard.notify.send" not in modules, broken(
        "no-webhook-loads-no-sender", "the webhooks' sender loaded, though none is named"
    )


def test_the_other_commands_are_all_there_when_none_is_named(tmp_path: Path) -> None:
    modules, done = _imported(tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    for command in ("audit", "reap", "trust", "history", "ack", "init", "adapters"):
        assert f" {command} " in done.stdout, f"--help lists no {command}:\n{done.stdout}"
    assert "cloudguard.cli.reap" in modules


# -- the values typer gives a command: the same with and without pydantic ------------------------


def _values_app() -> typer.Typer:
    app = typer.Typer(add_completion=False)

    @app.command()
    def values(
        name: Annotated[str | None, typer.Option()] = None,
        names: Annotated[list[str] | None, typer.Option("--names")] = None,
        count: Annotated[int | None, typer.Option(min=1)] = None,
        counts: Annotated[list[int] | None, typer.Option("--counts", min=1)] = None,
        flag: Annotated[bool | None, typer.Option("--flag/--no-flag")] = None,
        path: Annotated[Path | None, typer.Option()] = None,
        rest: Annotated[list[str] | None, typer.Argument()] = None,
    ) -> None:
        typer.echo(repr((name, names, count, counts, flag, path, rest)))

    return app


COMMAND_LINES = {
    "nothing-given": [],
    "a-string": ["--name", "vm-1"],
    "a-padded-string": ["--name", " padded "],
    "an-empty-string": ["--name", ""],
    "a-non-ascii-string": ["--name", "é"],
    "a-byte-no-utf8": ["--name", "\udcff"],  # as Python decodes an argv byte that is no UTF-8
    "a-dash": ["--name", "-"],
    "strings-repeated": ["--names", "a", "--names", "", "--names", "b c"],
    "a-number": ["--count", "3"],
    "a-number-below-its-minimum": ["--count", "0"],
    "not-a-number": ["--count", "x"],
    "numbers-repeated": ["--counts", "1", "--counts", "2"],
    "a-flag": ["--flag"],
    "a-flag-negated": ["--no-flag"],
    "a-path": ["--path", "some/file"],
    "arguments": ["--name", "a", "x", "y"],
}


@pytest.mark.parametrize("argv", COMMAND_LINES.values(), ids=COMMAND_LINES.keys())
def test_each_value_is_what_typer_would_give(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer import _coercion

    from cloudguard.cli import lean_coercion

    lean_coercion.apply()
    lean = CliRunner().invoke(_values_app(), argv)
    monkeypatch.setattr(typer.core, "build_runtime_param", _coercion.build_runtime_param)
    typers = CliRunner().invoke(_values_app(), argv)
    assert (lean.exit_code, lean.output) == (typers.exit_code, typers.output), broken(
        "the-values-typer-would-give",
        f"{argv}: lean {lean.exit_code} {lean.output!r}, typer {typers.exit_code} "
        f"{typers.output!r}",
    )

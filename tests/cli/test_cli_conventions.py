"""The command behaves as command-line tools conventionally do: --version, -h,
completion, short options, one way to give a command its input, metavars that
say what goes there, and usage lines a person can read."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_helpers import cloudguard

from cloudguard import __version__

COMMANDS = (
    (),
    ("run",),
    ("check",),
    ("doctor",),
    ("demo",),
    ("audit",),
    ("reap",),
    ("reap", "plan"),
    ("reap", "apply"),
    ("history",),
    ("history", "runs"),
    ("history", "resource"),
    ("history", "cost"),
    ("history", "offenders"),
    ("history", "acks"),
    ("ack",),
)


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_names_the_distribution(flag: str) -> None:
    done = cloudguard(flag)
    assert done.exit_code == 0
    assert done.stdout == f"cloudguard-ci {__version__}\n"


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "cloudguard")
def test_every_command_answers_h_and_shows_no_type_placeholders(command: tuple[str, ...]) -> None:
    short, long = cloudguard(*command, "-h"), cloudguard(*command, "--help")
    assert short.exit_code == long.exit_code == 0
    assert short.stdout == long.stdout
    # Typer's own labels (<bool>, <str>, <list[str]>, <file>) say nothing about what goes there.
    assert not re.search(r"<(bool|str|int|file|path|list\[[a-z]+\])>", short.stdout), short.stdout
    usage = next(line for line in short.stdout.splitlines() if "Usage:" in line)
    assert "{" not in usage, usage  # typer's mark for a required argument


def test_completion_is_offered() -> None:
    done = cloudguard("-h")
    assert "--install-completion" in done.stdout and "--show-completion" in done.stdout


def test_run_usage_reads_as_typed() -> None:
    done = cloudguard("run", "-h")
    assert re.search(r"Usage: \S+ run \[OPTIONS\] -- \[CMD\]\.\.\.", done.stdout), done.stdout
    missing = cloudguard("run")
    assert missing.exit_code == 2
    assert "give the command to run after --" in missing.output


def test_metavars_say_what_goes_there() -> None:
    audit = cloudguard("audit", "-h").stdout
    for shown in ("FILE|-", "NAME", "ID", "DIR", "DURATION", "KEY=VALUE", "KEY", "N", "FORMAT"):
        assert re.search(rf"\s{re.escape(shown)}\s", audit), shown
    assert "table|json|markdown|junit|sarif|html" in audit
    assert "PATH" in cloudguard("run", "-h").stdout
    assert "BYTES" in cloudguard("check", "-h").stdout


@pytest.fixture
def report(tmp_path: Path) -> Path:
    inventory = tmp_path / "inventory.json"
    inventory.write_text("[]")
    out = tmp_path / "audit.json"
    done = cloudguard("audit", "-i", str(inventory), "-f", "json", "-o", str(out))
    assert done.exit_code == 0, done.output
    return out


def test_short_options_work_for_audit(report: Path) -> None:
    assert json.loads(report.read_text())["schema"] == "cloudguard.audit"


def test_reap_plan_takes_its_input_as_apply_does(report: Path, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    done = cloudguard("reap", "plan", str(report), "-o", str(plan))
    assert done.exit_code == 0, done.output
    assert json.loads(plan.read_text())["schema"] == "cloudguard.reap.plan"
    assert f"cloudguard reap apply {plan}" in done.stderr
    assert "deprecated" not in done.stderr


def test_reap_plan_from_still_works_with_a_deprecation_note(report: Path) -> None:
    done = cloudguard("reap", "plan", "--from", str(report))
    assert done.exit_code == 0, done.output
    assert "--from is deprecated; give the report as an argument" in done.stderr
    assert json.loads(done.stdout)["schema"] == "cloudguard.reap.plan"
    both = cloudguard("reap", "plan", str(report), "--from", str(report))
    assert both.exit_code == 2
    assert "give the report once" in both.output
    neither = cloudguard("reap", "plan")
    assert neither.exit_code == 2
    assert "give the audit report to plan from" in neither.output


def test_report_writes_more_formats_from_the_same_audit(report: Path, tmp_path: Path) -> None:
    inventory = tmp_path / "inventory.json"
    sarif, markdown = tmp_path / "audit.sarif", tmp_path / "audit.md"
    done = cloudguard(
        "audit", "-i", str(inventory), "-f", "json",
        "--report", f"sarif={sarif}", "--report", f"markdown={markdown}",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["schema"] == "cloudguard.audit"
    assert json.loads(sarif.read_text())["version"] == "2.1.0"
    assert markdown.read_text().startswith("## cloudguard audit")
    assert oct(sarif.stat().st_mode & 0o777) == "0o600"  # written as cloudguard's own file
    bad = cloudguard("audit", "-i", str(inventory), "--report", "pdf=x.pdf")
    assert bad.exit_code == 2
    assert "expected FORMAT=FILE with FORMAT one of table|json|markdown|junit|sarif|html" in (
        bad.output
    )

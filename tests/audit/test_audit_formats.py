"""Every format parses, and hostile tag values cannot break a report line."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

import pytest
from audit_helpers import azure_vm, controller_home, run_audit_cli, write_json
from named_checks import broken

from cloudguard.audit.auditor import run_audit
from cloudguard.audit.cost import bundled_prices
from cloudguard.audit.evidence.interface import EvidenceRequest
from cloudguard.audit.formats import table
from cloudguard.audit.formats.json_report import JsonFormat
from cloudguard.audit.formats.junit import JunitFormat
from cloudguard.audit.formats.table import TableFormat
from cloudguard.audit.inventory_files import InventoryFile
from cloudguard.documents.audit_report import report_document
from cloudguard.documents.findings import AuditPolicy

HOSTILE = "evil\x1b[2J\x1b]0;pwned\x07\nsecond line\r|`<script>\u202e[bold]x[/bold]"
LONG = "g" * 10_240


@pytest.fixture
def hostile(tmp_path):
    vms = write_json(
        tmp_path / "az.json",
        [
            azure_vm("vm-hostile", tags={"task-id": HOSTILE, "repository-generation": LONG}),
            azure_vm("vm-long", tags={"task-id": LONG}),
            azure_vm("vm-fine", tags={"task-id": "t-ok"}, power="VM deallocated"),
        ],
    )
    home = controller_home(tmp_path / "home", meta=["t-ok"])
    return ["--inventory", str(vms), "--controller-home", str(home)]


def _render(args, fmt):
    result = run_audit_cli(*args, "--format", fmt)
    assert result.exit_code == 1, result.stderr
    return result.stdout


def test_json_parses_keeps_exact_values_and_declares_its_schema(hostile):
    report = json.loads(_render(hostile, "json"))
    assert (report["schema"], report["schema_version"]) == ("cloudguard.audit", 2)
    values = {f["resource"]["name"]: f for f in report["findings"]}
    assert values["vm-hostile"]["task_id"] == HOSTILE
    assert values["vm-hostile"]["generation"] == LONG
    assert set(report["summary"]) >= {"resources", "untagged", "by_verdict", "hourly", "accrued"}


def test_table_keeps_one_line_per_vm_and_no_escape_sequences(hostile):
    out = _render(hostile, "table")
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    rows = [line for line in out.splitlines() if "vm-" in line]
    assert len(rows) == 3
    hostile_row = next(r for r in rows if "vm-hostile" in r)
    assert "evil\\x1b[2J" in hostile_row
    assert all(len(r) < 600 for r in rows)
    assert "second line" not in out.replace(hostile_row, "")


def test_markdown_rows_are_one_per_vm_and_cannot_break_the_table(hostile):
    out = _render(hostile, "markdown")
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    header, *body = rows
    assert len(body) == 3
    columns = header.count(" | ")
    for row in body:
        assert row.replace("\\|", "").count(" | ") == columns
        assert "<script>" not in row and "\x1b" not in row
    assert any("chars\\)" in row for row in body)  # the 10 kB value is shortened


def test_junit_parses_with_failures_for_orphans(hostile):
    root = ET.fromstring(_render(hostile, "junit"))
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == ("3", "2")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["vm-hostile"].find("failure").get("type") == "orphan"
    assert cases["vm-fine"].find("failure") is None
    message = cases["vm-hostile"].find("failure").get("message")
    assert "\n" not in message and "\x1b" not in message


def test_unknown_format_is_a_usage_error(hostile):
    assert run_audit_cli(*hostile, "--format", "yaml").exit_code == 2


def _terminal(hostile_args, monkeypatch, columns):
    """The table as a terminal of `columns` gets it (color on, width from COLUMNS)."""
    monkeypatch.setenv("COLUMNS", str(columns))
    inventory, home = hostile_args[1], hostile_args[3]
    report = run_audit(
        [InventoryFile(inventory)],
        EvidenceRequest(controller_home=home),
        AuditPolicy(),
        bundled_prices(),
        datetime.now(UTC),
    )
    return TableFormat().render(report, color=True)


@pytest.mark.parametrize("columns", [240, 80])
def test_a_terminal_gets_its_width_and_tag_values_stay_escaped(hostile, monkeypatch, columns):
    out = _terminal(hostile, monkeypatch, columns)

    lines = out.splitlines()
    assert max(len(_plain(line)) for line in lines if "vm-" in line) <= columns
    assert "\x1b[2J" not in out and "\x1b]0;" not in out and "\x07" not in out
    assert "evil\\x1b[2J" in _plain(out)
    cards = [line for line in lines if _plain(line).lstrip().startswith("reasons:")]
    # Wide: one table row per VM. Narrow: one block per VM, each naming its reasons.
    assert len(cards) == (0 if columns == 240 else 3)


def _plain(text):
    return re.sub(r"\x1b\[[0-9;]*m", "", text)  # rich's own styling, not tag content


def _report(inventory, **sources):
    return run_audit(
        [InventoryFile(inventory)],
        EvidenceRequest(**sources),
        AuditPolicy(),
        bundled_prices(),
        datetime.now(UTC),
    )


def test_the_streamed_json_is_the_report_document(hostile, tmp_path):
    report = _report(hostile[1], controller_home=hostile[3])
    streamed = json.loads(JsonFormat().render(report))
    assert streamed == json.loads(json.dumps(report_document(report)))
    assert len(streamed["findings"]) == 3
    # An empty report and an unreadable source stream valid JSON too.
    empty = write_json(tmp_path / "none.json", [])
    assert json.loads(JsonFormat().render(_report(str(empty))))["findings"] == []
    broken = _report(str(tmp_path / "absent.json"))
    assert json.loads(JsonFormat().render(broken))["failures"][0]["source"].startswith("inventory")


def test_junit_names_unreadable_sources_as_errors(tmp_path):
    report = _report(str(tmp_path / "absent.json"))
    suite = ET.fromstring(JunitFormat().render(report)).find("testsuite")
    assert (suite.get("tests"), suite.get("errors")) == ("1", "1")
    assert "absent.json" in suite.find("testcase/error").get("message")


def test_output_is_never_written_through_a_planted_symlink(hostile, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    link = tmp_path / "report.json"
    link.symlink_to(victim)
    result = run_audit_cli(*hostile, "--format", "json", "--output", str(link))
    assert victim.read_text() == "keep me\n", broken(
        "output-follows-no-link", "the report was written through a planted symlink"
    )
    assert result.exit_code == 75
    assert "cannot write --output" in result.stderr and "symbolic link" in result.stderr
    # Control: a plain path is written, and the report there parses.
    plain = tmp_path / "plain.json"
    assert run_audit_cli(*hostile, "--format", "json", "--output", str(plain)).exit_code == 1
    assert json.loads(plain.read_text())["schema"] == "cloudguard.audit"


def test_a_terminal_given_a_huge_report_gets_the_plain_table(hostile, monkeypatch):
    monkeypatch.setattr(table, "RICH_LIMIT", 2)  # the real limit is thousands of findings
    out = _terminal(hostile, monkeypatch, 400)  # wide enough for every column on one line
    rows = [line for line in out.splitlines() if "vm-" in line]
    assert len(rows) == 3 and all(row.startswith("│ ") for row in rows)
    assert "\x1b" not in out


def _written(hostile_args, path, monkeypatch, columns):
    """The table as `cloudguard audit --output FILE` writes it (no terminal there)."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", str(columns))
    report = run_audit(
        [InventoryFile(hostile_args[1])],
        EvidenceRequest(controller_home=hostile_args[3]),
        AuditPolicy(),
        bundled_prices(),
        datetime.now(UTC),
    )
    with path.open("w", encoding="utf-8") as out:
        TableFormat().write(report, out)
    return path.read_text().splitlines()


def test_a_table_written_to_a_file_fits_a_ci_log(hostile, tmp_path, monkeypatch):
    # A file or a pipe has no terminal width: 120 columns (what a CI log viewer shows), one
    # block per finding when every column on one line would not fit, verdict first.
    lines = _written(hostile, tmp_path / "audit.txt", monkeypatch, None)
    assert max(len(line) for line in lines) <= table.PLAIN_WIDTH, max(lines, key=len)
    heads = sorted(line.split()[:2] for line in lines if line[:1].isalpha() and " vm-" in line)
    assert heads == [["ok", "vm-fine"], ["orphan", "vm-hostile"], ["orphan", "vm-long"]]
    assert not any("\x1b" in line for line in lines)


@pytest.mark.parametrize("columns", [100, 400])
def test_plain_text_takes_the_width_columns_gives(hostile, tmp_path, monkeypatch, columns):
    # $COLUMNS wins: wide enough, every column of a finding on one line (for grep);
    # narrower, blocks, each line wrapped to the width.
    lines = _written(hostile, tmp_path / "audit.txt", monkeypatch, columns)
    assert max(len(line) for line in lines) <= columns
    rows = [line for line in lines if line.startswith("│ ") and "vm-" in line]
    assert len(rows) == (3 if columns == 400 else 0)

"""Values from outside stay inert in a PR comment, and `--output` follows no planted link."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from audit_helpers import azure_vm, run_audit_cli, write_json
from named_checks import broken

from cloudguard.audit.formats.markdown import cell

IMAGE = "![pixel](https://attacker.example/t.png)"
LINK = "[click](https://attacker.example/phish)"


def test_a_markdown_cell_escapes_link_and_image_syntax() -> None:
    escaped = cell(f"{IMAGE} {LINK}")

    assert "![" not in escaped and "](" not in escaped, broken(
        "markdown-links-escaped", f"link syntax survived: {escaped}"
    )
    assert escaped == (
        "\\!\\[pixel\\]\\(https\\://attacker\\.example/t\\.png\\) "
        "\\[click\\]\\(https\\://attacker\\.example/phish\\)"
    )


def test_a_backslash_in_a_value_cannot_undo_the_pipe_escape() -> None:
    # `\|` would become `\\|`: an escaped backslash and a live pipe that ends the cell.
    assert cell("a\\|b") == "a\\\\\\|b"


def test_a_tag_with_an_image_reaches_the_report_inert(tmp_path: Path) -> None:
    write_json(tmp_path / "vms.json", [azure_vm("vm-1", tags={"task-id": IMAGE})])

    result = run_audit_cli("--inventory", str(tmp_path / "vms.json"), "--format", "markdown")

    assert "![" not in result.stdout and "](" not in result.stdout, result.stdout


def test_output_never_follows_a_planted_symlink(tmp_path: Path) -> None:
    write_json(tmp_path / "vms.json", [azure_vm("vm-1", tags={"task-id": "t-1"})])
    victim = tmp_path / "victims-file"
    victim.write_text("precious\n")
    planted = tmp_path / "report.json"
    planted.symlink_to(victim)

    result = run_audit_cli(
        "--inventory", str(tmp_path / "vms.json"), "--format", "json", "--output", str(planted)
    )

    assert victim.read_text() == "precious\n", broken(
        "output-follows-no-link", "the report overwrote the link's target"
    )
    assert result.exit_code == 75, result.stderr
    assert "symbolic link" in result.stderr


def test_output_is_created_private(tmp_path: Path) -> None:
    write_json(tmp_path / "vms.json", [azure_vm("vm-1", tags={"task-id": "t-1"})])
    report = tmp_path / "report.json"

    run_audit_cli(
        "--inventory", str(tmp_path / "vms.json"), "--format", "json", "--output", str(report)
    )

    assert report.is_file() and stat.S_IMODE(os.stat(report).st_mode) == 0o600

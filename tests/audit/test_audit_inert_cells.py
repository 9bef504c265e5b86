"""Values from the cloud stay inert wherever a report is rendered, judged by GitHub's renderer.

A VM's name and tags are written by whoever created it. GitHub renders the
markdown report (a job summary, a PR comment) with its cmark fork and the
autolink extension, which links bare `http(s)://`, `www.` names and e-mail
addresses (and `mailto:`, `xmpp:`) even where every markdown construct is
escaped; SARIF messages (code scanning) and JUnit messages (test-report
summaries) reach markdown too. Each format is rendered here with cmarkgfm,
GitHub's own cmark-gfm, and no link or image may come from a value. The
control renders the same values bare and finds the links, so an empty
result means something.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from audit_helpers import azure_vm, controller_home, run_audit_cli, write_json
from github_markdown import HOSTILE, gfm, link_targets
from named_checks import broken


@pytest.fixture(scope="module")
def inventory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One orphan per hostile value (no controller record): in its name, task id, generation."""
    where = tmp_path_factory.mktemp("inert")
    controller_home(where / "home")
    vms = [
        azure_vm(value, tags={"task-id": value, "repository-generation": value})
        for value in HOSTILE.values()
    ]
    return write_json(where / "vms.json", vms)


def rendered(inventory: Path, fmt: str) -> str:
    home = str(inventory.parent / "home")
    result = run_audit_cli(
        "--inventory", str(inventory), "--controller-home", home, "--format", fmt
    )
    assert result.exit_code == 1, result.stderr
    return str(result.stdout)


def test_control_gfm_links_every_hostile_value_when_it_is_not_made_inert() -> None:
    for kind, value in HOSTILE.items():
        assert link_targets(gfm(f"| a |\n|---|\n| {value} |\n")), f"{kind} was not linked bare"


def test_the_markdown_report_makes_no_link(inventory: Path) -> None:
    report = rendered(inventory, "markdown")

    assert link_targets(gfm(report)) == [], broken(
        "no-link-in-markdown", "a value became a link in the markdown report"
    )
    # Escaped, and split by an empty comment, the address still reads as itself.
    assert "mallory@attacker.example" in gfm(report).replace("<!-- -->", "")


def test_sarif_messages_make_no_link(inventory: Path) -> None:
    results = json.loads(rendered(inventory, "sarif"))["runs"][0]["results"]
    texts = [r["message"]["text"] for r in results]

    assert len(texts) == len(HOSTILE)
    for text in texts:
        assert link_targets(gfm(text)) == [], broken(
            "no-link-in-sarif", f"a value became a link in SARIF text: {text}"
        )
        assert "](" not in text.replace("\\]", ""), f"an embedded SARIF link: {text}"


def test_junit_messages_make_no_link(inventory: Path) -> None:
    root = ET.fromstring(rendered(inventory, "junit"))
    shown = [v for e in root.iter() for v in (*e.attrib.values(), e.text or "")]

    assert any("attacker" in v for v in shown), "the values never reached the JUnit report"
    for value in shown:
        assert link_targets(gfm(value)) == [], broken(
            "no-link-in-junit", f"a value became a link in JUnit: {value}"
        )


def test_the_html_report_makes_no_link(inventory: Path) -> None:
    page = rendered(inventory, "html")

    assert "attacker" in page, "the values never reached the HTML report"
    assert link_targets(page) == [], "a value became a link or an image in the HTML report"
    assert link_targets(gfm(page)) == [], "a value became a link once the page met GFM"

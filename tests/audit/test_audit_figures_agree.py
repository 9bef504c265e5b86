"""Unknown is unknown in every format: one audit, rendered six ways, says the same figures.

One fleet holds every kind of cost: priced and running, running with a size the
price table lacks, deallocated (compute does not bill), with no power state,
and running without a creation time (its accrued cost unknown). One audit
writes it as JSON, table, markdown, JUnit, SARIF and HTML (`--report`: one
sweep, one report). Each format's figures are read back from what it wrote
and compared with the JSON document's: a number is the same number, "-" means
"compute does not bill", "unknown" means unknown, and no format turns an
unknown into 0.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from typing import Any

import pytest
from audit_helpers import azure_vm, cli_app, controller_home, run_audit_cli, write_json
from named_checks import broken
from typer.testing import CliRunner

from cloudguard.audit.formats.text import money

FORMATS = ("table", "markdown", "junit", "sarif", "html")


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every format of one audit, by name (JSON parsed; the others as text)."""
    tmp = tmp_path_factory.mktemp("figures")
    a_day_ago = datetime.now(UTC) - timedelta(days=1)
    ageless = azure_vm("vm-ageless", tags={"task-id": "t-gone-4"})
    del ageless["timeCreated"]
    no_power = azure_vm("vm-no-power", tags={"task-id": "t-gone-3"})
    del no_power["powerState"]
    inventory = write_json(
        tmp / "az.json",
        [
            azure_vm("vm-priced", tags={"task-id": "t-gone-1"}),
            azure_vm("vm-unpriced", tags={"task-id": "t-gone-2"}, size="Standard_Nope_v9"),
            azure_vm("vm-off", tags={"task-id": "t-live"}, power="VM deallocated"),
            no_power,
            ageless,
            azure_vm("vm-ok", tags={"task-id": "t-live-2"}, created=a_day_ago),
        ],
    )
    home = controller_home(tmp / "home", meta=["t-live", "t-live-2"])
    paths = {name: tmp / f"audit.{name}" for name in FORMATS}
    reports = [arg for name in FORMATS for arg in ("--report", f"{name}={paths[name]}")]
    # Module-scoped: made before the per-test state directory exists, so no history.
    result = run_audit_cli(
        "-i", str(inventory), "--controller-home", str(home), "-f", "json", "--no-history",
        *reports,
    )  # fmt: skip
    assert result.exit_code == 1, result.stderr
    return {"json": json.loads(result.stdout)} | {n: p.read_text() for n, p in paths.items()}


def canonical(finding: dict[str, Any], currency: str) -> tuple[str, str, str]:
    """billable, per hour, accrued as the JSON document means them, in words."""
    if finding["billable"] is None:
        return "unknown (power state unknown)", "unknown", "unknown"
    if not finding["billable"]:
        return "no (disks bill)", "-", "-"
    cost = finding["cost"]
    return "yes", money(cost["hourly"], currency), money(cost["accrued"], currency)


def expected(written: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    document = written["json"]
    currency = document["prices"]["currency"]
    return {f["resource"]["name"]: canonical(f, currency) for f in document["findings"]}


def test_the_fleet_holds_every_kind_of_cost(written: dict[str, Any]) -> None:
    cells = expected(written)
    assert cells["vm-priced"] == ("yes", "0.1720 USD", cells["vm-priced"][2])
    assert cells["vm-unpriced"] == ("yes", "unknown", "unknown")
    assert cells["vm-off"] == ("no (disks bill)", "-", "-")
    assert cells["vm-no-power"][1:] == ("unknown", "unknown")
    assert cells["vm-ageless"] == ("yes", "0.1720 USD", "unknown")
    summary = written["json"]["summary"]
    assert (summary["unpriced_billable"], summary["age_unknown_billable"]) == (1, 1)
    assert summary["power_unknown"] == 1


def _table_rows(text: str, separator: str) -> dict[str, list[str]]:
    lines = [line for line in text.splitlines() if line.startswith(separator[0])]
    header, *rows = [
        [cell.strip() for cell in line.strip(separator[0]).split(separator)] for line in lines
    ]
    rows = [row for row in rows if not set("".join(row)) <= set("-─┼├┤")]
    return {row[header.index("name")]: row for row in rows} | {"": header}


def _cells(rows: dict[str, list[str]], name: str) -> tuple[str, str, str]:
    header, row = rows[""], rows[name]
    billable, hourly, accrued = (row[header.index(c)] for c in ("billable", "per hour", "accrued"))
    return billable, hourly, accrued


def test_the_table_says_what_the_json_says(written: dict[str, Any]) -> None:
    rows = _table_rows(written["table"], "│")
    for name, cells in expected(written).items():
        assert _cells(rows, name) == cells, broken(
            "the-table-says-what-the-json-says", f"table row of {name}: {_cells(rows, name)}"
        )


def test_markdown_says_what_the_json_says(written: dict[str, Any]) -> None:
    unescaped = re.sub(r"\\(.)", r"\1", written["markdown"])
    rows = _table_rows(unescaped, "|")
    for name, cells in expected(written).items():
        assert _cells(rows, name) == cells, f"markdown row of {name}"


def test_a_block_per_finding_names_its_price_source_whole(tmp_path: Any) -> None:
    """Plain text narrower than the table writes a block per finding: its price source is
    the whole name (the table's cell is cut to fit; a block has room to wrap)."""
    inventory = write_json(tmp_path / "az.json", [azure_vm("vm-priced", tags={"task-id": "t"})])
    result = CliRunner().invoke(
        cli_app(), ["audit", "-i", str(inventory), "--no-history"], env={"COLUMNS": "80"}
    )

    block = " ".join(result.stdout.split())  # the block's wrapped lines, as one
    document = run_audit_cli("-i", str(inventory), "--no-history", "-f", "json").stdout
    source = json.loads(document)["findings"][0]["cost"]["source"]
    assert len(source) > 36 and f"(prices: {source})" in block, result.stdout


_SPEND = re.compile(r"billable (.+?), per hour (.+?), accrued ([^;]+?)(?:;|$)")


def test_junit_says_what_the_json_says(written: dict[str, Any]) -> None:
    suite = ET.fromstring(written["junit"]).find("testsuite")
    assert suite is not None
    found = {}
    for case in suite.iter("testcase"):
        outcome = next(iter(case), None)
        text = (outcome.get("message") if outcome is not None else None) or ""
        text = text or (outcome.text if outcome is not None else "") or ""
        match = _SPEND.search(text)
        assert match, f"no figures in the JUnit case of {case.get('name')}: {text!r}"
        found[case.get("name")] = match.groups()
    assert found == expected(written), broken(
        "the-junit-says-what-the-json-says", f"the JUnit figures differ from the JSON's: {found}"
    )


def test_sarif_says_what_the_json_says(written: dict[str, Any]) -> None:
    document = json.loads(written["sarif"])
    by_name = {f["resource"]["name"]: f for f in written["json"]["findings"]}
    results = document["runs"][0]["results"]
    assert results, "the fleet's orphans are SARIF results"
    for result in results:
        name = result["locations"][0]["logicalLocations"][0]["name"]
        match = _SPEND.search(result["message"]["text"])
        assert match and match.groups() == expected(written)[name], result["message"]["text"]
        properties, finding = result["properties"], by_name[name]
        assert (properties["hourly"], properties["accrued"]) == (
            finding["cost"]["hourly"],
            finding["cost"]["accrued"],
        )
        assert properties["billable"] == finding["billable"]


class _Page(HTMLParser):
    """The findings table's cells and the charts' bar texts of the HTML report."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.header: list[str] = []
        self.charts: list[list[str]] = []
        self._cell: list[str] | None = None
        self._in_text = False
        self._in_findings = False  # the page has other tables (repeat offenders)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._in_findings = ("id", "findings") in attrs
        elif not self._in_findings and tag in ("tr", "td", "th"):
            return
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "svg":
            self.charts.append([])
        elif tag == "text":
            self._in_text = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in_findings = False
        elif tag in ("td", "th") and self._cell is not None:
            (self.header if tag == "th" else self.rows[-1]).append("".join(self._cell))
            self._cell = None
        elif tag == "text":
            self._in_text = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        elif self._in_text and self.charts:
            self.charts[-1].append(data)


def test_the_html_page_says_what_the_json_says(written: dict[str, Any]) -> None:
    page = _Page()
    page.feed(written["html"])
    rows = {row[page.header.index("name")]: row for row in page.rows if row}
    for name, (_, hourly, accrued) in expected(written).items():
        row = rows[name]
        shown = (row[page.header.index("per hour")], row[page.header.index("accrued")])
        assert shown == (hourly, accrued), f"HTML row of {name}"


def test_the_html_charts_never_count_an_unknown_cost_as_zero(written: dict[str, Any]) -> None:
    page = _Page()
    page.feed(written["html"])
    by_verdict = page.charts[1]  # title, then label and text per bar
    bars = dict(zip(by_verdict[1::2], by_verdict[2::2], strict=True))
    document = written["json"]
    currency = document["prices"]["currency"]
    for verdict in {f["verdict"] for f in document["findings"]}:
        findings = [f for f in document["findings"] if f["verdict"] == verdict]
        known = [f["cost"]["accrued"] for f in findings if f["billable"] and f["cost"]["accrued"]]
        unknown = sum(
            1 for f in findings if f["billable"] is not False and f["cost"]["accrued"] is None
        )
        shown = bars[verdict]
        if unknown and not known:
            assert shown == f"unknown ({unknown})", broken(
                "an-unknown-cost-is-not-zero", f"the {verdict} bar shows {shown!r}"
            )
        elif unknown:
            assert shown == f"{money(sum(known), currency)} + {unknown} unknown", broken(
                "an-unknown-cost-is-not-zero", f"the {verdict} bar shows {shown!r}"
            )
        else:
            assert shown == money(sum(known), currency), f"the {verdict} bar shows {shown!r}"


def test_every_format_opens_with_the_same_headline_and_its_sums_are_the_jsons(
    written: dict[str, Any],
) -> None:
    document = written["json"]
    headline = written["table"].splitlines()[0]
    summary, currency = document["summary"], document["prices"]["currency"]
    assert (
        f"{summary['billable']} billable: ~{money(summary['hourly'], currency)}/h, "
        f"~{money(summary['accrued'], currency)} accrued (1 of unknown price in neither sum; "
        "1 of unknown age not in the accrued sum); 1 more of unknown billing"
    ) in headline
    markdown = re.sub(r"\\(.)", r"\1", written["markdown"]).splitlines()[2]
    junit = ET.fromstring(written["junit"]).find("testsuite/system-out")
    sarif = json.loads(written["sarif"])["runs"][0]["properties"]["summary"]
    page = re.search(r'<p id="headline">(.*?)</p>', written["html"])
    assert page is not None and junit is not None and junit.text is not None
    from html import unescape

    assert {markdown, junit.text.splitlines()[0], sarif, unescape(page.group(1))} == {headline}

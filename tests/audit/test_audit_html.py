"""`--format html`: one self-contained page, checked in a real headless Chromium.

The browser runs in a network namespace of its own (`unshare -rn`): the page
must load and work with nothing reachable. It must raise no console error
(its Content-Security-Policy forbids every network source, so a page that
tried to fetch anything would log one), show the orphan rows, sort its
table, and draw its charts. A screenshot is kept in test-artefacts/.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from audit_helpers import run_audit_cli
from headless_chromium import Browser
from named_checks import broken
from report_fleet import fleet_args

ARTEFACTS = Path(__file__).resolve().parents[2] / "test-artefacts"


@pytest.fixture
def page(tmp_path: Path, browser: Browser) -> Path:
    report = tmp_path / "report.html"
    result = run_audit_cli(*fleet_args(tmp_path), "--format", "html", "--output", str(report))
    assert result.exit_code == 1, result.stderr
    browser.console_errors.clear()
    browser.open(report.as_uri())
    return report


def _column(browser: Browser, header: str) -> list[str]:
    return list(
        browser.evaluate(
            "(function(){var t=document.getElementById('findings');"
            "var i=[].findIndex.call(t.tHead.rows[0].cells,function(c){"
            f"return c.textContent==={header!r};}});"
            "return [].map.call(t.tBodies[0].rows,function(r){return r.cells[i].textContent;});})()"
        )
    )


def _click(browser: Browser, header: str) -> None:
    browser.evaluate(
        "[].find.call(document.querySelectorAll('#findings th'),function(c){"
        f"return c.textContent==={header!r};}}).click()"
    )


def test_the_page_loads_with_no_console_error_and_shows_the_orphans(
    page: Path, browser: Browser
) -> None:
    assert browser.evaluate("document.title") == "cloudguard audit"
    assert browser.console_errors == []
    orphans = browser.evaluate(
        "[].map.call(document.querySelectorAll('tr.verdict-orphan'),"
        "function(r){return r.cells[1].textContent;})"
    )
    assert sorted(orphans) == ["i-0123456789abcdef0", "vm-orphan-1", "vm-orphan-2"]
    assert "1 without the 'task-id' tag" in browser.evaluate(
        "document.getElementById('headline').textContent"
    )
    ARTEFACTS.mkdir(exist_ok=True)
    browser.screenshot(ARTEFACTS / "audit-report.png")
    assert (ARTEFACTS / "audit-report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_table_sorts_by_the_clicked_column(page: Path, browser: Browser) -> None:
    _click(browser, "name")
    names = _column(browser, "name")
    assert names == sorted(names) and len(names) == 7
    _click(browser, "name")
    assert _column(browser, "name") == sorted(names, reverse=True)
    # Numbers sort by value, not as text ("12.38 USD" after "6.19 USD").
    _click(browser, "accrued")
    values = browser.evaluate(
        "[].map.call(document.querySelectorAll('#findings tbody tr'),"
        "function(r){return Number(r.cells[9].getAttribute('data-sort'));})"
    )
    assert values == sorted(values) and values[0] < values[-1]
    assert browser.console_errors == []


def test_the_charts_show_cost_by_account_and_by_verdict(page: Path, browser: Browser) -> None:
    labels = browser.evaluate(
        "[].map.call(document.querySelectorAll('svg'),function(s){"
        "return s.getAttribute('aria-label');})"
    )
    assert labels == [
        "Accrued cost by subscription / account (USD)",
        "Accrued cost by verdict (USD)",
        # The history's trend (docs/history.md): one column per day audited, today's only.
        "Orphans and leaked resources, per day",
        "Leaked cost observed accruing, per day (USD)",
    ]
    bars = browser.evaluate("document.querySelectorAll('svg rect').length")
    # Two subscriptions and an AWS account; five verdicts; today's leaking resources. The
    # first audit observed no cost accruing yet: that chart says so, with no scale of zero.
    assert bars == 3 + 5 + 1, broken("an-empty-chart-draws-no-zero", f"{bars} bars")
    assert "none in 1 day" in page.read_text() and "max 0.0000" not in page.read_text()


def test_control_a_page_that_fetches_from_the_network_is_caught(
    tmp_path: Path, browser: Browser
) -> None:
    # The no-console-error check can fail: the same policy on a page that loads
    # an image from the network logs an error (and, in the namespace, nothing leaves).
    from cloudguard.audit.formats.html import CSP

    fetching = tmp_path / "fetching.html"
    fetching.write_text(
        f'<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" '
        f'content="{CSP}"><title>x</title></head><body>'
        '<img src="https://example.com/pixel.png"></body></html>'
    )
    browser.console_errors.clear()
    browser.open(fetching.as_uri())
    assert any("Content Security Policy" in error for error in browser.console_errors)


def test_cloud_values_are_escaped_and_nothing_is_linked(tmp_path: Path) -> None:
    from audit_helpers import azure_vm, write_json

    hostile = '<img src=x onerror=alert(1)>"</script>'
    inventory = write_json(tmp_path / "az.json", [azure_vm("vm-x", tags={"task-id": hostile})])
    result = run_audit_cli("-i", str(inventory), "--format", "html", "--allow-unverified")
    assert result.exit_code == 0, result.stderr  # unverified (no controller evidence), accepted
    page = result.stdout
    assert hostile not in page
    assert "&lt;img src=x onerror=alert(1)&gt;&quot;&lt;/script&gt;" in page
    # Self-contained: no URL anywhere (the SVG namespace is a name, not a fetch).
    assert "://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")


LONG_VALUES = {  # each as long as the report lets it be, and unbreakable
    "task-id": "t" * 64,
    "repository-generation": "a" * 40,
}


@pytest.mark.parametrize("width", [1280, 1920])
def test_every_column_is_visible_at_common_window_widths(
    tmp_path: Path, browser: Browser, width: int
) -> None:
    from audit_helpers import azure_vm, write_json

    inventory = write_json(
        tmp_path / "long.json",
        [azure_vm("vm-" + "n" * 77, tags=LONG_VALUES, size="Standard_E104ids_v5")],
    )
    fixtures = tmp_path / "fixture-ids.txt"
    fixtures.write_text("t" * 64 + "\n")
    report = tmp_path / "report.html"
    args = [*fleet_args(tmp_path), "-i", str(inventory), "--fixture-ids", str(fixtures)]
    result = run_audit_cli(*args, "-f", "html", "-o", str(report))
    assert result.exit_code == 1, result.stderr
    browser.open(report.as_uri())
    browser.resize(width)
    window = browser.evaluate("document.documentElement.clientWidth")
    cells = browser.evaluate(
        "[].map.call(document.querySelectorAll('#findings th, #findings td'), function (c) {"
        "var r = c.getBoundingClientRect(); return [c.textContent, r.left, r.right];})"
    )
    hidden = [text for text, left, right in cells if left < 0 or right > window]
    assert not hidden, broken(
        "every-cell-on-screen", f"at {width} px these cells are off-screen: {hidden[:5]}"
    )
    assert browser.evaluate("document.documentElement.scrollWidth") <= window
    cut = browser.evaluate(
        "[].concat.apply([], [].map.call(document.querySelectorAll('svg'), function (svg) {"
        "var w = svg.viewBox.baseVal.width; return [].filter.call(svg.querySelectorAll('text'),"
        "function (t) { var b = t.getBBox(); return b.x < 0 || b.x + b.width > w; })"
        ".map(function (t) { return t.textContent; }); }))"
    )
    assert not cut, f"chart texts drawn past their chart's edge: {cut}"
    page = report.read_text()
    assert "(+-" not in page, "a cut value miscounts what it left out"
    findings = page.split('<table id="findings"', 1)[1].split("</table>", 1)[0]
    assert "…(+" not in findings, "a value was cut in the findings table"
    ARTEFACTS.mkdir(exist_ok=True)
    browser.screenshot(ARTEFACTS / f"audit-report-{width}.png", width=width)
    browser.resize(1400)


# Each run of a word between spaces and hyphens, in a cell that may not break inside one,
# that the browser drew on more than one line.
_BROKEN_WORDS = (
    "[].concat.apply([], [].map.call(document.querySelectorAll('#findings td:not(.long)'),"
    "function (td) { var t = td.firstChild, out = [], re = /[^\\s-]+/g, m;"
    "if (!t || t.nodeType !== 3) { return out; }"
    "while ((m = re.exec(t.data))) { var r = document.createRange();"
    "r.setStart(t, m.index); r.setEnd(t, m.index + m[0].length);"
    "if (r.getClientRects().length > 1) { out.push(m[0]); } } return out; }))"
)


def test_at_1400_px_no_word_is_broken_and_a_one_day_trend_is_one_narrow_column(
    tmp_path: Path, browser: Browser
) -> None:
    from audit_helpers import azure_vm, write_json

    dead = azure_vm("vm-task-dead9", tags={"task-id": "task-dead9c0ffee-0042"})
    inventory = write_json(tmp_path / "dead.json", [dead])
    report = tmp_path / "report.html"
    args = [*fleet_args(tmp_path), "-i", str(inventory)]
    assert run_audit_cli(*args, "-f", "html", "-o", str(report)).exit_code == 1
    browser.open(report.as_uri())
    browser.resize(1400)

    broken_words = browser.evaluate(_BROKEN_WORDS)
    assert not broken_words, broken(
        "no-word-broken-where-it-fits", f"words broken across lines at 1400 px: {broken_words}"
    )
    widths = browser.evaluate(
        "[].map.call(document.querySelectorAll('svg[aria-label^=\"Orphans\"] rect'),"
        "function (r) { return r.width.baseVal.value; })"
    )
    assert len(widths) == 1 and widths[0] <= 24, broken(
        "one-day-is-one-narrow-column", f"a one-day trend drawn {widths} px wide"
    )
    offenders = browser.evaluate(
        "[].map.call(document.querySelectorAll('#offenders th'), function (c) {"
        "return c.textContent; })"
    )
    assert "leaking observations" in offenders and not any("audits" in h for h in offenders)
    browser.screenshot(ARTEFACTS / "audit-report-1400-words.png", width=1400)
    browser.screenshot(ARTEFACTS / "audit-report-900.png", width=900)
    browser.resize(1400)

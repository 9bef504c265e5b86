"""One self-contained HTML page: the summary, cost charts, and a sortable findings table.

With the history, also what changed since the last audit, a trend (orphans
and leaked resources, and the leaked cost observed, per day over the last 90
days) and the task ids that keep leaking.

Nothing is fetched when the page is viewed: styles, the sorting script and the
charts (inline SVG) are in the file, and its Content-Security-Policy forbids
every network source, so a viewer cannot be made to load anything. Every value
from the cloud (names, tags) is HTML-escaped; the script only reorders rows.
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

from cloudguard.audit.formats.changes import change_text, history_lines, shows_changes
from cloudguard.audit.formats.order import report_order
from cloudguard.audit.formats.rows import CHANGE_COLUMN, cost_cells
from cloudguard.audit.formats.summary import evidence_lines, failure_lines, headline, price_line
from cloudguard.audit.formats.text import age, money, one_line
from cloudguard.documents.findings import VERDICTS, AuditReport, Finding, Spend, spend

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"

COLORS = {
    "leaked": "#b3261e",
    "orphan": "#d9480f",
    "suspect": "#c28b00",
    "pending": "#5c7cfa",
    "unverified": "#868e96",
    "ok": "#2b8a3e",
}

# Every column fits the window, down to 1280 px, and no word is broken where it fits: a
# free-form value wraps between its words (`overflow-wrap:break-word` keeps a column as wide
# as its longest word); only a run of more than LONG_WORD characters without a space or a
# hyphen (an instance id, a generation) may break anywhere (`long`: `overflow-wrap:anywhere`
# lowers its narrowest width). The short columns (verdict, region, size, power, figures)
# never break. A header wraps between its words. In a
# narrower window the page scrolls sideways rather than break words.
STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1d1d1f;max-width:1800px}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem}
.charts{display:flex;flex-wrap:wrap;gap:2rem}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border-bottom:1px solid #ddd;padding:.3rem .35rem;text-align:left;vertical-align:top}
td{overflow-wrap:break-word;word-break:normal}td.long{overflow-wrap:anywhere}
td.short,td.num{white-space:nowrap}
th{cursor:pointer;user-select:none;background:#f4f4f6;position:sticky;top:0}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.verdict{font-weight:600}.failures{color:#b3261e}
"""

# Sorts the table by the clicked column: numbers by value, text by locale; a second
# click reverses. Reads data-sort when present (costs, ages), else the cell's text.
SCRIPT = """
document.querySelectorAll("table.sortable th").forEach(function (th, column) {
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0];
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var key = function (row) {
      var cell = row.cells[column];
      return cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent;
    };
    var numeric = th.hasAttribute("data-numeric");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a), y = key(b);
      var order = numeric ? Number(x) - Number(y) : x.localeCompare(y);
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  });
});
"""

# (header, numeric?) in table order.
COLUMNS = (
    ("verdict", False), ("name", False), ("provider", False), ("account", False),
    ("group", False), ("region", False), ("size", False), ("power", False),
    ("per hour", True), ("accrued", True), ("price from", False), ("age", True),
    ("task id", False),
    ("generation", False), ("reasons", False),
)  # fmt: skip


def _e(value: str) -> str:
    return html.escape(value, quote=True)


def _sort_key(value: float | None, billable: bool | None) -> str:
    """A cost cell's data-sort: what does not bill is 0; an unknown cost sorts as the most
    (it may be), never as nothing."""
    if billable is False:
        return "0"
    return "Infinity" if value is None else repr(value)


LONG_WORD = 16  # characters: a run up to this long is never broken (a UUID's are 12)
_UNBROKEN = re.compile(r"[\s-]+")


def _free(text: str) -> str:
    """The cell of a free-form value: wrapped between its words (and after a hyphen), broken
    inside a word only when one is longer than LONG_WORD."""
    # A browser may wrap after a hyphen: the run between two is what cannot be broken.
    if any(len(run) > LONG_WORD for run in _UNBROKEN.split(text)):
        return f'<td class="long">{_e(text)}</td>'
    return f"<td>{_e(text)}</td>"


def _row(finding: Finding, report: AuditReport) -> str:
    currency = report.prices.currency
    r, cost = finding.resource, finding.cost
    _, hourly, accrued = cost_cells(cost, currency, r.kind)
    seconds = int(finding.age.total_seconds()) if finding.age is not None else -1
    rank = VERDICTS.index(finding.verdict) if finding.verdict in VERDICTS else len(VERDICTS)
    colour = COLORS.get(finding.verdict, "#000")
    cells = [
        f'<td class="verdict short" data-sort="{rank}" style="color:{colour}">'
        f"{_e(finding.verdict)}</td>",
        _free(one_line(r.name, 80)),
        f"<td>{_e(r.provider)} {_e(r.kind)}</td>",
        _free(one_line(r.account, 64)),
        _free(one_line(r.group, 64) if r.group else "-"),
        f'<td class="short">{_e(one_line(r.region, 32))}</td>',
        f'<td class="short">{_e(one_line(r.size, 32))}</td>',
        f'<td class="short">{_e(r.power_state)}</td>',
        f'<td class="num" data-sort="{_sort_key(cost.hourly, cost.billable)}">{_e(hourly)}</td>',
        f'<td class="num" data-sort="{_sort_key(cost.accrued, cost.billable)}">{_e(accrued)}</td>',
        _free(one_line(cost.source, 80) or "-"),
        f'<td class="num" data-sort="{seconds}">{_e(age(finding.age))}</td>',
        _free(one_line(finding.task_id, 64)),
        _free(one_line(finding.generation, 64)),  # a whole SHA-256 fits
        _free(", ".join(finding.reasons) or "-"),
    ]
    if shows_changes(report):
        cells.append(_free(change_text(report, finding)))
    return f'<tr class="finding verdict-{_e(finding.verdict)}">' + "".join(cells) + "</tr>"


def bar_chart(
    title: str,
    bars: Iterable[tuple[str, float, str]],
    show: Callable[[float], str],
    *,
    width: int = 720,
    empty: str = "nothing billable",
    shown: Sequence[str] | None = None,
) -> str:
    """A horizontal bar chart as SVG: (label, value, colour) per bar; `show` writes a value
    (or `shown`: each bar's text, when a value alone would not say all of it).

    Also draws the benchmark charts in docs/ (benchmarks/charts.py)."""
    bars = list(bars)
    texts = list(shown) if shown is not None else [show(value) for _, value, _ in bars]
    label_width, row, top = 330, 26, 30  # a subscription id and its provider fit
    height = top + row * max(len(bars), 1) + 10
    biggest = max((value for _, value, _ in bars), default=0.0) or 1.0
    # Room after the longest bar for its text (~7 px a character at 12 px), never cut.
    span = max(width - label_width - 10 - 7 * max(map(len, texts), default=0), 100)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" aria-label="{_e(title)}">',
        f'<text x="0" y="18" font-size="14" font-weight="600">{_e(title)}</text>',
    ]
    if not bars:
        parts.append(f'<text x="0" y="{top + 16}" font-size="12">{_e(empty)}</text>')
    for index, ((label, value, color), text) in enumerate(zip(bars, texts, strict=True)):
        y = top + index * row
        length = max(value / biggest * span, 1.0) if value else 0.0
        parts += [
            f'<text x="{label_width - 8}" y="{y + 16}" font-size="12" text-anchor="end">'
            f"{_e(one_line(label, 48))}</text>",
            f'<rect x="{label_width}" y="{y + 4}" width="{length:.1f}" height="16" '
            f'fill="{color}"><title>{_e(label)}: {_e(text)}</title></rect>',
            f'<text x="{label_width + length + 6:.1f}" y="{y + 16}" font-size="12">'
            f"{_e(text)}</text>",
        ]
    parts.append("</svg>")
    return "".join(parts)


def accrued_text(cost: Spend, currency: str) -> str:
    """A group's accrued cost as the table would add it up: the known sum, and how many of
    its resources cost an unknown amount (not in it: never counted as zero)."""
    if not cost.unknown:
        return money(cost.accrued, currency)
    if not cost.billable - cost.unpriced - cost.age_unknown:
        return f"unknown ({cost.unknown})"
    return f"{money(cost.accrued, currency)} + {cost.unknown} unknown"


def _chart(title: str, groups: dict[str, tuple[list[Finding], str]], currency: str) -> str:
    costs = {name: spend(findings) for name, (findings, _) in groups.items()}
    bars = [(name, costs[name].accrued, colour) for name, (_, colour) in groups.items()]
    texts = [accrued_text(costs[name], currency) for name in groups]
    return bar_chart(title, bars, lambda value: money(value, currency), shown=texts)


MAX_COLUMN_WIDTH = 24.0  # px: a trend of a few days is a few bars, not a wall


def column_chart(
    title: str,
    columns: list[tuple[str, float]],
    show: Callable[[float], str],
    *,
    color: str,
    width: int = 660,
    height: int = 200,
    empty: str = "no audits recorded yet",
) -> str:
    """A column per (label, value), left to right (days, oldest first), as SVG."""
    left, top, bottom = 8, 30, 24
    plot = height - top - bottom
    biggest = max((value for _, value in columns), default=0.0) or 1.0
    # A column is at most a few days' width wide: one day is one bar, not a full-width block.
    step = min((width - left) / max(len(columns), 1), MAX_COLUMN_WIDTH)
    drawn = any(value for _, value in columns)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" aria-label="{_e(title)}">',
        f'<text x="0" y="18" font-size="14" font-weight="600">{_e(title)}</text>',
    ]
    if not columns or not drawn:
        # Nothing above zero has no scale to draw ("max 0.0000 USD"): say so instead.
        said = empty if not columns else f"none in {len(columns)} day{'s' * (len(columns) > 1)}"
        parts.append(f'<text x="0" y="{top + 16}" font-size="12">{_e(said)}</text>')
    for index, (label, value) in enumerate(columns if drawn else ()):
        tall = value / biggest * plot
        x = left + index * step
        parts.append(
            f'<rect x="{x:.1f}" y="{top + plot - tall:.1f}" width="{max(step - 1, 1):.1f}" '
            f'height="{tall:.1f}" fill="{color}"><title>{_e(label)}: {_e(show(value))}'
            "</title></rect>"
        )
    if drawn:
        right = left + step * len(columns)  # where the last column ends
        parts.append(f'<text x="{left}" y="{height - 6}" font-size="11">{_e(columns[0][0])}</text>')
        if len(columns) > 1:
            parts.append(
                f'<text x="{right:.1f}" y="{height - 6}" font-size="11" text-anchor="end">'
                f"{_e(columns[-1][0])}</text>"
            )
        parts.append(
            f'<text x="{width}" y="{top - 2}" font-size="11" text-anchor="end">'
            f"max {_e(show(biggest))}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def history_section(report: AuditReport) -> list[str]:
    """What changed since the last audit; the trend of leaks per day; who keeps leaking."""
    lines = ["<h2>Since the last audit</h2>", "<ul>"]
    lines += [f"<li>{_e(line)}</li>" for line in history_lines(report)]
    lines.append("</ul>")
    history = report.history
    if history is None:
        return lines
    currency = report.prices.currency
    days = [(day.day, float(day.leaking)) for day in history.trend]
    cost = [(day.day, day.leaked_accrued) for day in history.trend]
    lines += [
        "<h2>Trend</h2>",
        '<div class="charts">'
        + column_chart("Orphans and leaked resources, per day", days, lambda v: f"{v:,.0f}",
                       color=COLORS["orphan"])
        + column_chart(f"Leaked cost observed accruing, per day ({currency})", cost,
                       lambda v: money(v, currency), color="#1f6feb")
        + "</div>",
        "<h2>Repeat offenders: the task ids that keep leaking</h2>",
    ]  # fmt: skip
    if not history.offenders:
        return [*lines, "<p>No task id was ever found leaking.</p>"]
    header = "".join(f'<th scope="col">{_e(h)}</th>' for h in OFFENDER_COLUMNS)
    lines.append(f'<table id="offenders"><thead><tr>{header}</tr></thead><tbody>')
    for o in history.offenders:
        cells = (one_line(o.task_id, 64), str(o.resources), str(o.leaking_observations),
                 money(o.leaked_accrued, currency), f"{o.first_seen:%Y-%m-%d}",
                 f"{o.last_seen:%Y-%m-%d}")  # fmt: skip
        lines.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in cells) + "</tr>")
    lines.append("</tbody></table>")
    return lines


# As `cloudguard history offenders` says it: an observation is stored when something changed
# (docs/history.md), so it counts changes seen while leaking, not audits.
OFFENDER_COLUMNS = ("task id", "resources leaked", "leaking observations",
                    "leaked cost observed", "first seen", "last seen")  # fmt: skip


def cost_charts(report: AuditReport) -> str:
    currency = report.prices.currency
    by_account: dict[str, list[Finding]] = defaultdict(list)
    by_verdict: dict[str, list[Finding]] = defaultdict(list)
    for finding in report.findings:
        r = finding.resource
        by_account[f"{r.provider} {r.account or '(unknown account)'}"].append(finding)
        by_verdict[finding.verdict].append(finding)
    accounts = sorted(by_account.items(), key=lambda group: -spend(group[1]).accrued)
    return (
        '<div class="charts">'
        + _chart(
            f"Accrued cost by subscription / account ({currency})",
            {name: (findings, "#1f6feb") for name, findings in accounts},
            currency,
        )
        + _chart(
            f"Accrued cost by verdict ({currency})",
            {v: (by_verdict[v], COLORS[v]) for v in VERDICTS if v in by_verdict},
            currency,
        )
        + "</div>"
    )


class HtmlFormat:
    def render(self, report: AuditReport, *, color: bool = False) -> str:
        lines = [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            "<title>cloudguard audit</title>",
            f"<style>{STYLE}</style></head><body>",
            "<h1>cloudguard audit</h1>",
            f'<p id="headline">{_e(headline(report))}</p>',
        ]
        if report.failures:
            lines.append('<h2 class="failures">Could not read (the audit is incomplete)</h2><ul>')
            lines += [f'<li class="failures">{_e(line)}</li>' for line in failure_lines(report)]
            lines.append("</ul>")
        lines.append(
            "<ul>" + "".join(f"<li>{_e(x)}</li>" for x in evidence_lines(report)) + "</ul>"
        )
        lines += ["<h2>Cost</h2>", cost_charts(report), *history_section(report)]
        lines.append("<h2>Findings</h2>")
        if report.findings:
            columns = [*COLUMNS, *([(CHANGE_COLUMN, False)] if shows_changes(report) else [])]
            header = "".join(
                f'<th scope="col"{" data-numeric" if numeric else ""}>{_e(name)}</th>'
                for name, numeric in columns
            )
            lines.append(f'<table id="findings" class="sortable"><thead><tr>{header}</tr></thead>')
            lines.append("<tbody>")
            lines += [_row(f, report) for f in report_order(report.findings)]
            lines.append("</tbody></table>")
        else:
            lines.append("<p>No fleet resources found.</p>")
        lines += [
            f"<p><em>{_e(price_line(report))}</em></p>",
            f"<script>{SCRIPT}</script>",
            "</body></html>",
        ]
        return "\n".join(lines) + "\n"

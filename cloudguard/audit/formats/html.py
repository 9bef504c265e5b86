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
from collections import defaultdict
from collections.abc import Callable, Iterable

from cloudguard.audit.formats.changes import change_text, history_lines, shows_changes
from cloudguard.audit.formats.order import report_order
from cloudguard.audit.formats.rows import CHANGE_COLUMN
from cloudguard.audit.formats.summary import evidence_lines, failure_lines, headline, price_line
from cloudguard.audit.formats.text import age, money, one_line
from cloudguard.documents.findings import VERDICTS, AuditReport, Finding

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"

COLORS = {
    "leaked": "#b3261e",
    "orphan": "#d9480f",
    "suspect": "#c28b00",
    "pending": "#5c7cfa",
    "unverified": "#868e96",
    "ok": "#2b8a3e",
}

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1d1d1f;max-width:1400px}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem}
.charts{display:flex;flex-wrap:wrap;gap:2rem}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{cursor:pointer;user-select:none;background:#f4f4f6;position:sticky;top:0}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
td.num{text-align:right;font-variant-numeric:tabular-nums}
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


def _row(finding: Finding, report: AuditReport) -> str:
    currency = report.prices.currency
    r, cost = finding.resource, finding.cost
    hourly = cost.hourly if cost.billable and cost.hourly is not None else 0.0
    accrued = cost.accrued if cost.billable and cost.accrued is not None else 0.0
    seconds = int(finding.age.total_seconds()) if finding.age is not None else -1
    rank = VERDICTS.index(finding.verdict) if finding.verdict in VERDICTS else len(VERDICTS)
    colour = COLORS.get(finding.verdict, "#000")
    cells = [
        f'<td class="verdict" data-sort="{rank}" style="color:{colour}">{_e(finding.verdict)}</td>',
        f"<td>{_e(one_line(r.name, 80))}</td>",
        f"<td>{_e(r.provider)} {_e(r.kind)}</td>",
        f"<td>{_e(one_line(r.account, 64))}</td>",
        f"<td>{_e(one_line(r.group, 64) if r.group else '-')}</td>",
        f"<td>{_e(one_line(r.region, 32))}</td>",
        f"<td>{_e(one_line(r.size, 32))}</td>",
        f"<td>{_e(r.power_state)}</td>",
        f'<td class="num" data-sort="{hourly}">'
        f"{_e(money(cost.hourly, currency) if cost.billable else '-')}</td>",
        f'<td class="num" data-sort="{accrued}">'
        f"{_e(money(cost.accrued, currency) if cost.billable else '-')}</td>",
        f"<td>{_e(one_line(cost.source, 80) or '-')}</td>",
        f'<td class="num" data-sort="{seconds}">{_e(age(finding.age))}</td>',
        f"<td>{_e(one_line(finding.task_id, 64))}</td>",
        f"<td>{_e(one_line(finding.generation, 16))}</td>",
        f"<td>{_e(', '.join(finding.reasons) or '-')}</td>",
    ]
    if shows_changes(report):
        cells.append(f"<td>{_e(change_text(report, finding))}</td>")
    return f'<tr class="finding verdict-{_e(finding.verdict)}">' + "".join(cells) + "</tr>"


def bar_chart(
    title: str,
    bars: Iterable[tuple[str, float, str]],
    show: Callable[[float], str],
    *,
    width: int = 660,
    empty: str = "nothing billable",
) -> str:
    """A horizontal bar chart as SVG: (label, value, colour) per bar; `show` writes a value.

    Also draws the benchmark charts in docs/ (benchmarks/charts.py)."""
    bars = list(bars)
    label_width, row, top = 330, 26, 30  # a subscription id and its provider fit
    height = top + row * max(len(bars), 1) + 10
    biggest = max((value for _, value, _ in bars), default=0.0) or 1.0
    span = width - label_width - 110
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" aria-label="{_e(title)}">',
        f'<text x="0" y="18" font-size="14" font-weight="600">{_e(title)}</text>',
    ]
    if not bars:
        parts.append(f'<text x="0" y="{top + 16}" font-size="12">{_e(empty)}</text>')
    for index, (label, value, color) in enumerate(bars):
        y = top + index * row
        length = max(value / biggest * span, 1.0) if value else 0.0
        parts += [
            f'<text x="{label_width - 8}" y="{y + 16}" font-size="12" text-anchor="end">'
            f"{_e(one_line(label, 48))}</text>",
            f'<rect x="{label_width}" y="{y + 4}" width="{length:.1f}" height="16" '
            f'fill="{color}"><title>{_e(label)}: {_e(show(value))}</title></rect>',
            f'<text x="{label_width + length + 6:.1f}" y="{y + 16}" font-size="12">'
            f"{_e(show(value))}</text>",
        ]
    parts.append("</svg>")
    return "".join(parts)


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
    step = (width - left) / max(len(columns), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" aria-label="{_e(title)}">',
        f'<text x="0" y="18" font-size="14" font-weight="600">{_e(title)}</text>',
    ]
    if not columns:
        parts.append(f'<text x="0" y="{top + 16}" font-size="12">{_e(empty)}</text>')
    for index, (label, value) in enumerate(columns):
        tall = value / biggest * plot
        x = left + index * step
        parts.append(
            f'<rect x="{x:.1f}" y="{top + plot - tall:.1f}" width="{max(step - 1, 1):.1f}" '
            f'height="{tall:.1f}" fill="{color}"><title>{_e(label)}: {_e(show(value))}'
            "</title></rect>"
        )
    if columns:
        parts += [
            f'<text x="{left}" y="{height - 6}" font-size="11">{_e(columns[0][0])}</text>',
            f'<text x="{width}" y="{height - 6}" font-size="11" text-anchor="end">'
            f"{_e(columns[-1][0])}</text>",
            f'<text x="{width}" y="{top - 2}" font-size="11" text-anchor="end">'
            f"max {_e(show(biggest if any(v for _, v in columns) else 0.0))}</text>",
        ]
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


OFFENDER_COLUMNS = ("task id", "resources leaked", "audits that saw them leaking",
                    "leaked cost observed", "first seen", "last seen")  # fmt: skip


def _accrued(findings: Iterable[Finding]) -> float:
    return sum(f.cost.accrued or 0.0 for f in findings if f.cost.billable)


def cost_charts(report: AuditReport) -> str:
    currency = report.prices.currency
    by_account: dict[str, list[Finding]] = defaultdict(list)
    by_verdict: dict[str, list[Finding]] = defaultdict(list)
    for finding in report.findings:
        r = finding.resource
        by_account[f"{r.provider} {r.account or '(unknown account)'}"].append(finding)
        by_verdict[finding.verdict].append(finding)
    accounts = sorted(
        ((name, _accrued(fs), "#1f6feb") for name, fs in by_account.items()),
        key=lambda bar: -bar[1],
    )
    verdicts = [(v, _accrued(by_verdict[v]), COLORS[v]) for v in VERDICTS if v in by_verdict]

    def show(value: float) -> str:
        return money(value, currency)

    return (
        '<div class="charts">'
        + bar_chart(f"Accrued cost by subscription / account ({currency})", accounts, show)
        + bar_chart(f"Accrued cost by verdict ({currency})", verdicts, show)
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

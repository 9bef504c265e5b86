"""Markdown for a PR or issue comment: a summary and one table row per finding."""

from __future__ import annotations

from cloudguard.audit.findings import AuditReport
from cloudguard.audit.formats.order import report_order
from cloudguard.audit.formats.summary import evidence_lines, failure_lines, headline, price_line
from cloudguard.audit.formats.text import age, money, one_line

_COLUMNS = (
    "verdict", "name", "account / group", "size", "power", "billable",
    "per hour", "accrued", "age", "task id", "generation", "reasons",
)  # fmt: skip


def cell(value: str) -> str:
    """A table cell that cannot end the row, open code, or inject HTML."""
    return (
        value.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("|", "\\|")
        .replace("`", "\\`")
    )


class MarkdownFormat:
    def render(self, report: AuditReport, *, color: bool = False) -> str:
        lines = ["## cloudguard audit", "", cell(headline(report)), ""]
        if report.failures:
            lines += ["**Could not read (the audit is incomplete):**", ""]
            lines += [f"- {cell(line)}" for line in failure_lines(report)] + [""]
        lines += [f"- {cell(line)}" for line in evidence_lines(report)] + [""]
        if report.findings:
            lines.append("| " + " | ".join(_COLUMNS) + " |")
            lines.append("|" + "---|" * len(_COLUMNS))
            currency = report.prices.currency
            for f in report_order(report.findings):
                r = f.resource
                row = [
                    f"**{f.verdict}**" if f.verdict in {"orphan", "leaked"} else f.verdict,
                    one_line(r.name, 40),
                    one_line("/".join(p for p in (r.account, r.group) if p), 64),
                    one_line(r.size, 24),
                    r.power_state,
                    "yes" if f.cost.billable else "no (disks bill)",
                    money(f.cost.hourly, currency) if f.cost.billable else "-",
                    money(f.cost.accrued, currency) if f.cost.billable else "-",
                    age(f.age),
                    one_line(f.task_id, 40),
                    one_line(f.generation, 16),
                    ", ".join(f.reasons) or "-",
                ]
                lines.append("| " + " | ".join(cell(c) for c in row) + " |")
            lines.append("")
        lines.append(f"_{cell(price_line(report))}_")
        return "\n".join(lines) + "\n"

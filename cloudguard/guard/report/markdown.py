"""`--report markdown=FILE`: a job summary a person reads (`$GITHUB_STEP_SUMMARY`).

A heading that says the verdict, one table row per test a reach failed (the
test and its line, the phase and fixture, what was reached, through what),
then the fix once per channel. Every value is a cell that renders as exactly
itself (`cloudguard.escape.markdown_cell`): a test name or a URL from the
record can neither end the row nor become a link.
"""

from __future__ import annotations

from cloudguard.escape import markdown_cell, one_line
from cloudguard.guard import hints
from cloudguard.guard.report import Entry, ReachReport

COLUMNS = ("test", "at", "during", "reached", "via")


def render(report: ReachReport) -> str:
    lines = [f"## cloudguard: {markdown_cell(report.headline())}", ""]
    untrusted = "- **the reach log cannot be trusted:**"
    lines += [f"{untrusted} {markdown_cell(one_line(what, 500))}" for what in report.problems]
    if report.entries:
        lines += ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
        lines += ["| " + " | ".join(map(_cell, _row(entry))) + " |" for entry in report.entries]
        lines += ["", "**To make the tests hermetic:**", ""]
        for via in dict.fromkeys(entry.field("via") for entry in report.entries):
            advice = " ".join(hints.for_channel(via).split())
            lines.append(f"- {_cell(via)}: {_cell(advice)}")
    lines += ["", f"_exit {report.exit_code}; reach log: {_cell(report.log)}_", ""]
    return "\n".join(lines)


def _row(entry: Entry) -> list[str]:
    at = f"{entry.file}:{entry.line}" if entry.line else entry.file
    during = entry.where
    if entry.again:
        during += f" (raised again: recorded for {entry.field('test') or 'no test'})"
    operation = entry.field("operation")
    reached = entry.field("target") + (f" ({operation})" if operation else "")
    return [entry.test or "(outside any test)", at, during, reached, entry.field("via")]


def _cell(value: str) -> str:
    return markdown_cell(one_line(value, 300))

"""JUnit XML for CI dashboards: one test case per fleet resource, one per unreadable source.

A finding that fails the audit is a failure (orphan and leaked; unverified
unless --allow-unverified; suspect too with fail-on suspect; only the new ones
with fail-on new; never an acknowledged one); pending, and the rest of the
unverified, are skipped (not a pass: nothing was proven); unreadable sources
are errors.

Written element by element as it is formatted (the counts on <testsuite>
come from one cheap pass first), never as one in-memory tree: a tree of
100,000 test cases cost more than the whole audit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TextIO
from xml.sax.saxutils import escape, quoteattr

from cloudguard.audit.formats import StreamedFormat
from cloudguard.audit.formats.changes import change_text, history_lines, shows_changes
from cloudguard.audit.formats.order import report_order
from cloudguard.audit.formats.rows import cost_cells
from cloudguard.audit.formats.summary import headline, warning_lines
from cloudguard.audit.formats.text import defang, inert
from cloudguard.cloud.kinds import VM
from cloudguard.documents.findings import (
    PENDING,
    UNVERIFIED,
    AuditReport,
    Finding,
    failing,
)

_SKIPPED = frozenset({PENDING, UNVERIFIED})


class JunitFormat(StreamedFormat):
    def write(self, report: AuditReport, out: TextIO, *, color: bool = False) -> None:
        fails = {id(f) for f in report.findings if failing(report, f)}
        counts = {
            "tests": len(report.failures) + len(report.findings),
            "failures": len(fails),
            "errors": len(report.failures),
            "skipped": sum(
                1 for f in report.findings if f.verdict in _SKIPPED and id(f) not in fails
            ),
        }
        out.write('<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n')
        out.write(f'  <testsuite name="cloudguard audit"{_attributes(counts)}>\n')
        for failure in report.failures:
            source = _attributes(classname="cloudguard.audit.sources", name=inert(failure.source))
            reason = _attributes(message=inert(failure.reason, 300))
            out.write(f"    <testcase{source}>\n      <error{reason} />\n    </testcase>\n")
        currency = report.prices.currency
        # What repeats down a fleet's test cases (a class name, a kind, a task id) is made
        # inert once: defanging it took a third of a 100,000-case report's time.
        repeated, quoted = lru_cache(maxsize=1 << 16)(inert), lru_cache(maxsize=1 << 16)(quoteattr)
        for f in report_order(report.findings):
            r = f.resource
            classname = repeated(".".join(p for p in (r.provider, r.account, r.group) if p))
            name = quoteattr(inert(r.name))
            out.write(f"    <testcase classname={quoted(classname)} name={name}>\n")
            detail = _detail(f, currency, repeated)
            if shows_changes(report):
                detail += f"; since the last audit: {defang(change_text(report, f))}"
            if id(f) in fails:
                out.write(f"      <failure{_attributes(type=f.verdict, message=detail)} />\n")
            elif f.verdict in _SKIPPED:
                out.write(f"      <skipped{_attributes(message=detail)} />\n")
            else:
                out.write(f"      <system-out>{escape(detail)}</system-out>\n")
            out.write("    </testcase>\n")
        system_out = defang(
            "\n".join([headline(report), *warning_lines(report), *history_lines(report)])
        )
        out.write(f"    <system-out>{escape(system_out)}</system-out>\n")
        out.write("  </testsuite>\n</testsuites>\n")


def _detail(f: Finding, currency: str, made_inert: Callable[..., str]) -> str:
    r = f.resource
    billable, hourly, accrued = cost_cells(f.cost, currency, r.kind)
    return (
        f"{f.verdict}: {', '.join(f.reasons) or 'no reasons'}; {made_inert(r.kind, 40)}; "
        f"task id {made_inert(f.task_id)}; generation {made_inert(f.generation, 40)}; "
        f"{f'{r.power_state}, ' if r.kind == VM else ''}billable {billable}, "
        f"per hour {hourly}, accrued {accrued}"
    )


def _attributes(values: Mapping[str, object] | None = None, **more: object) -> str:
    # quoteattr escapes &, <, >, quotes and (as character references) \n, \r, \t.
    items = {**(values or {}), **more}
    return "".join(f" {key}={quoteattr(str(value))}" for key, value in items.items())

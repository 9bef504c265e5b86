"""JUnit XML for CI dashboards: one test case per fleet resource, one per unreadable source.

orphan and leaked are failures (and suspect with fail-on suspect); pending
and unverified are skipped (not a pass: nothing was proven); unreadable
sources are errors.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from cloudguard.audit.findings import LEAKED, ORPHAN, PENDING, SUSPECT, UNVERIFIED, AuditReport
from cloudguard.audit.formats.order import report_order
from cloudguard.audit.formats.summary import headline
from cloudguard.audit.formats.text import money, one_line


class JunitFormat:
    def render(self, report: AuditReport, *, color: bool = False) -> str:
        failing = {LEAKED, ORPHAN} | ({SUSPECT} if report.policy.fail_on == SUSPECT else set())
        suite = ET.Element("testsuite", name="cloudguard audit")
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for failure in report.failures:
            case = ET.SubElement(
                suite,
                "testcase",
                classname="cloudguard.audit.sources",
                name=one_line(failure.source),
            )
            ET.SubElement(case, "error", message=one_line(failure.reason, 300))
            counts["tests"] += 1
            counts["errors"] += 1
        currency = report.prices.currency
        for f in report_order(report.findings):
            r = f.resource
            case = ET.SubElement(
                suite,
                "testcase",
                classname=one_line(".".join(p for p in (r.provider, r.account, r.group) if p)),
                name=one_line(r.name),
            )
            detail = (
                f"{f.verdict}: {', '.join(f.reasons) or 'no reasons'}; task id "
                f"{one_line(f.task_id)}; generation {one_line(f.generation, 40)}; "
                f"{r.power_state}, billable {'yes' if f.cost.billable else 'no'}, "
                f"{money(f.cost.hourly, currency)}/h, accrued {money(f.cost.accrued, currency)}"
            )
            counts["tests"] += 1
            if f.verdict in failing:
                ET.SubElement(case, "failure", type=f.verdict, message=detail)
                counts["failures"] += 1
            elif f.verdict in {PENDING, UNVERIFIED}:
                ET.SubElement(case, "skipped", message=detail)
                counts["skipped"] += 1
            else:
                ET.SubElement(case, "system-out").text = detail
        for key, value in counts.items():
            suite.set(key, str(value))
        ET.SubElement(suite, "system-out").text = headline(report)
        root = ET.Element("testsuites")
        root.append(suite)
        ET.indent(root)
        return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, "unicode") + "\n"

"""`--report junit=FILE`: one test case per test a reach failed, for CI test-report views.

Named as pytest's own JUnit XML names a test (classname: the module path and
class, dotted; name: the function, parameters included), with its `file` and
`line`, so a CI view that already shows pytest's report puts cloudguard's
failure beside it. A reach outside any test is a test case of its own; the
keeper's tampering is an error. Every value from a record is defanged
(`cloudguard.escape.inert`): GitHub renders these messages as markdown.
"""

from __future__ import annotations

from collections.abc import Sequence
from xml.sax.saxutils import escape, quoteattr

from cloudguard.escape import inert
from cloudguard.guard import alarm, hints
from cloudguard.guard.report import Entry, ReachReport


def render(report: ReachReport) -> str:
    by_test: dict[str, list[Entry]] = {}
    for entry in report.entries:
        by_test.setdefault(entry.test, []).append(entry)
    counts = {"tests": len(by_test) + len(report.problems), "failures": len(by_test),
              "errors": len(report.problems)}  # fmt: skip
    lines = ['<?xml version="1.0" encoding="utf-8"?>', "<testsuites>",
             f'  <testsuite name="cloudguard"{_attributes(**counts)}>']  # fmt: skip
    for test, entries in by_test.items():
        lines += _case(test, entries)
    for what in report.problems:
        lines += [
            f"    <testcase{_attributes(classname='cloudguard', name='the reach log')}>",
            f"      <error{_attributes(message=inert(what, 500))} />",
            "    </testcase>",
        ]
    summary = f"{report.headline()}; exit {report.exit_code}; reach log: {report.log}"
    lines += [f"    <system-out>{escape(inert(summary, 2000))}</system-out>",
              "  </testsuite>", "</testsuites>", ""]  # fmt: skip
    return "\n".join(lines)


def _case(test: str, entries: Sequence[Entry]) -> list[str]:
    first = entries[0]
    names: dict[str, object] = dict(zip(("classname", "name"), _names(test, first), strict=True))
    if first.file:
        names["file"] = first.file
    if first.line:
        names["line"] = first.line
    message = "; ".join(dict.fromkeys(_summary(entry) for entry in entries))
    detail = "\n".join(
        [*(alarm.describe(entry.record) for entry in entries),
         *(f"To make the test hermetic ({via}): {' '.join(hints.for_channel(via).split())}"
           for via in dict.fromkeys(entry.field("via") for entry in entries))]
    )  # fmt: skip
    return [
        f"    <testcase{_attributes(**{k: inert(str(v), 500) for k, v in names.items()})}>",
        f"      <failure{_attributes(type='cloud-reach', message=inert(message, 1000))}>"
        f"{escape(inert(detail, 20000))}</failure>",
        "    </testcase>",
    ]


def _names(test: str, entry: Entry) -> tuple[str, str]:
    """pytest's JUnit naming: `tests.test_x.Class` and `test_y[param]`."""
    if not test:
        where = f"collection of {entry.file}" if entry.field("phase") == "collection" else ""
        return "cloudguard", where or "outside any test"
    path, *rest = test.split("::")
    module = path.removesuffix(".py").replace("/", ".")
    return ".".join([module, *rest[:-1]]), rest[-1] if rest else path


def _summary(entry: Entry) -> str:
    reached = alarm.named(entry.record)
    during = f" during {entry.where}" if entry.where else ""
    again = f", raised again (recorded for {entry.field('test')})" if entry.again else ""
    return f"reached a real cloud: {reached}{during}{again}"


def _attributes(**values: object) -> str:
    # quoteattr escapes &, <, >, quotes and (as character references) \n, \r, \t.
    return "".join(f" {key}={quoteattr(str(value))}" for key, value in values.items())

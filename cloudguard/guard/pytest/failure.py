"""The failure a test that reached gets: what it reached, each record, how to make it hermetic.

The advice is the channel's own text (`cloudguard.guard.hints`), the same the
refusing shims and the in-process exception show. Every field is read back
from the log and escaped for the terminal, as `alarm.describe` does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from cloudguard.escape import one_line
from cloudguard.guard import alarm, hints, reach

Record = Mapping[str, object]


def failure_message(
    records: Sequence[Record], log: str, provider_variable: str = "PROVIDER_VARIABLE"
) -> str:
    reached = [r for r in records if r.get("via") not in reach.WRITE_VIAS]
    wrote = [r for r in records if r.get("via") in reach.WRITE_VIAS]
    lines = []
    if reached:
        named = ", ".join(dict.fromkeys(_named(r) for r in reached))
        lines += [
            f"cloudguard: this test reached a real cloud: {named}",
            f"Each attempt ({len(reached)}) was refused before any packet left and recorded;",
            "the record fails the test even where the exception was caught.",
        ]
        lines += ["  " + alarm.describe(record).replace("\n", "\n  ") for record in reached]
    if wrote:
        named = ", ".join(dict.fromkeys(_named(r) for r in wrote))
        lines += [
            f"cloudguard: this test wrote where a run must not write: {named}",
            f"Each write ({len(wrote)}) was recorded; the run must leave these places as it "
            "found them.",
        ]
        lines += ["  " + alarm.describe(record).replace("\n", "\n  ") for record in wrote]
    lines.append(f"Reach log: {log}")
    lines.append("To make the test hermetic:")
    # `via` is read back from the log: escaped like every other field of a record.
    for via in dict.fromkeys(one_line(str(r.get("via")), 60) for r in records):
        advice = hints.for_channel(via, variable=provider_variable, indent="    ")
        lines.append(f"  {via}: {advice}")
    return "\n".join(lines)


def _named(record: Record) -> str:
    """`botocore -> sts.us-east-1.amazonaws.com (sts GetCallerIdentity)`, or for a write
    `ambient-write -> /home/u/.azure/config (modified)`."""
    via, target, operation = (record.get(key) for key in ("via", "target", "operation"))
    detail = record.get("change") if via in reach.WRITE_VIAS else operation
    named = f"{via} -> {target}" + (f" ({detail})" if detail else "")
    return one_line(named, 300)  # read back from the log: escaped as `alarm.describe` does


def fail(report: pytest.TestReport, item: pytest.Item, message: str) -> None:
    """Turn the report into a failure naming the reach, keeping any failure already there."""
    if report.failed:
        report.sections.append(("cloudguard", message))
        return
    try:
        raise pytest.fail.Exception(message, pytrace=False)
    except pytest.fail.Exception:
        excinfo = pytest.ExceptionInfo.from_current()
    report.longrepr = item.repr_failure(excinfo)
    report.outcome = "failed"
    if hasattr(report, "wasxfail"):
        del report.wasxfail

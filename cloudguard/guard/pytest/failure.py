"""The failure a test that reached gets: what it reached, each record, how to make it hermetic.

One short block per test: the reach (each record, with the phase and the
fixture that made it), the test (where in its code an exception came out,
when one did), the fix (the channel's own advice, `cloudguard.guard.hints`,
the same the refusing shims and the in-process exception show). The block
replaces the traceback of an exception the refusal raised or caused, in
every traceback style but `--tb=long` (and `--full-trace`): the frames
between the test and the refusal are the SDK's and cloudguard's, and say
nothing the block does not (a project's own `--tb=native` would print them
all, cloudguard's included). `--tb=long` keeps pytest's traceback, with
cloudguard's frames hidden, and adds the block after it. Every field is read
back from the log and escaped for the terminal, as `alarm.describe` does.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from cloudguard.escape import one_line
from cloudguard.guard import alarm, hints, reach
from cloudguard.guard.inprocess.refusal import CloudReachRefused

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _pytest._code.code import Traceback

Record = Mapping[str, object]


def failure_message(
    records: Sequence[Record],
    log: str,
    provider_variable: str = "PROVIDER_VARIABLE",
    *,
    raised: str = "",
) -> str:
    """The block for a test's own findings (reaches, then writes where a run must not write);
    `raised`: where the exception came out (`raised_at`)."""
    reached = [r for r in records if r.get("via") not in reach.WRITE_VIAS]
    wrote = [r for r in records if r.get("via") in reach.WRITE_VIAS]
    lines: list[str] = []
    if reached:
        lines += _section(
            reached,
            "this test reached a real cloud",
            f"Each attempt ({len(reached)}) was refused before any packet left and recorded; "
            "the record fails the test even where the exception was caught.",
        )
    if wrote:
        lines += _section(
            wrote,
            "this test wrote where a run must not write",
            f"Each write ({len(wrote)}) was recorded; the run must leave these places as it "
            "found them.",
        )
    if raised:
        lines.append(raised)
    lines.append(f"Reach log: {log}")
    return "\n".join(lines + _advice(records, provider_variable))


def _section(records: Sequence[Record], what: str, why: str) -> list[str]:
    named = ", ".join(dict.fromkeys(alarm.named(r) for r in records))
    described = ("  " + alarm.describe(record).replace("\n", "\n  ") for record in records)
    return [f"cloudguard: {what}: {named}", why, *described]


def refused_before(
    record: Record, nodeid: str, provider_variable: str = "PROVIDER_VARIABLE"
) -> str:
    """The block for a test that failed on a refusal recorded before it ran: pytest sets a
    class (or a module- or session-scoped fixture) up once and fails every test that needs
    it with the same exception, while the record names the test it was set up for."""
    recorded_for = str(record.get("test") or "")
    whom = "earlier in this test" if recorded_for == nodeid else f"for {recorded_for or 'no test'}"
    return "\n".join(
        [
            "cloudguard: this test failed on a cloud reach refused and recorded "
            f"{one_line(whom, 300)}: {alarm.named(record)}",
            "  " + alarm.describe(record).replace("\n", "\n  "),
            "A class's setup or a shared fixture runs once; pytest fails each test that needs it "
            "with the same error.",
            *_advice([record], provider_variable),
        ]
    )


def _advice(records: Sequence[Record], provider_variable: str) -> list[str]:
    lines = ["To make the test hermetic:"]
    # `via` is read back from the log: escaped like every other field of a record.
    for via in dict.fromkeys(one_line(str(r.get("via")), 60) for r in records):
        advice = hints.for_channel(via, variable=provider_variable, indent="    ")
        lines.append(f"  {via}: {advice}")
    return lines


# -- the exception, where a test raised one ------------------------------------------------


def refusal_in(excinfo: pytest.ExceptionInfo[BaseException] | None) -> CloudReachRefused | None:
    """The in-process refusal the test's exception is, or was raised from or while handling."""
    error = excinfo.value if excinfo is not None else None
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, CloudReachRefused):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def raised_at(excinfo: pytest.ExceptionInfo[BaseException], rootpath: Path, refusal: bool) -> str:
    """One line: where in the suite's own code the exception came out, and (when it is not
    the refusal itself, whose record the block shows) what it says."""
    where = _suite_frame(excinfo.traceback.filter(excinfo), rootpath) or "in installed code"
    if refusal:
        return f"The refusal ({excinfo.typename}) was raised {where}"
    first = str(excinfo.value).strip().splitlines()[:1]
    said = f"{excinfo.typename}: {first[0]}" if first else excinfo.typename
    return f"Then the test failed {where}\n  {one_line(said, 300)} (the whole traceback: --tb=long)"


def _suite_frame(traceback: Traceback, rootpath: Path) -> str:
    """`at tests/test_x.py:18, in test_y: client.list_buckets()`: the innermost frame in the
    suite's own files (under the rootdir, not an installed package), "" when none is."""
    for entry in reversed(traceback):
        path = Path(entry.path)
        try:
            relative = path.relative_to(rootpath)
        except ValueError:
            continue
        if {"site-packages", "dist-packages"} & set(relative.parts) or _installed(path):
            continue
        try:
            line = str(entry.statement).strip().splitlines()[0]
        except (IndexError, OSError):
            line = ""
        code = f": {one_line(line, 200)}" if line else ""  # the source line, as pytest shows it
        return f"at {one_line(str(relative), 300)}:{entry.lineno + 1}, in {entry.name}{code}"
    return ""


def _installed(path: Path) -> bool:
    """Python's own library, an installed package, or cloudguard itself (an editable one)."""
    return any(path.is_relative_to(prefix) for prefix in (sys.prefix, sys.base_prefix, _PACKAGE))


_PACKAGE = Path(__file__).resolve().parents[2]  # cloudguard/


def fail(report: pytest.TestReport, item: pytest.Item, message: str, *, replace: bool) -> None:
    """Make the report a failure naming the reach. A failure already there keeps its own
    traceback and gets the block after it, unless `replace`: the block says it all."""
    if report.failed and not replace:
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

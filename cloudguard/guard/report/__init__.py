"""The guard's findings as CI shows them: `--report FORMAT=FILE` for `run`, `check` and the plugin.

A `ReachReport` is what a run, a check or a pytest session found: each reach
(one `Entry` per test it failed, placed by the record's test, file and line,
phase and fixture), the keeper's tampering, the exit code. Each format is one
module with a `render(report) -> str` (the four are small: a whole document
is written at once):

    json      urn:cloudguard-ci:schema:reach-report:1, the records whole
    junit     one test case per test that reached, for CI test-report views
    markdown  for a job summary ($GITHUB_STEP_SUMMARY)
    sarif     SARIF 2.1.0, each result at the test's file and line, for code scanning

`FORMATS` is the one registry: the option's validation and help derive from it.
A report is written to a file cloudguard owns (never through a planted link);
one that cannot be written is named on stderr, and never changes the verdict.

Also here (each in its own words, the first line of its docstring):

- `json_report`: `--report json=FILE`: the records whole, placed, with the verdict (schema
  reach-report 1).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TextIO

from cloudguard import exit_codes

Record = Mapping[str, object]

FORMATS: dict[str, str] = {
    "json": "the records and the verdict (schema reach-report 1)",
    "junit": "one test case per test that reached",
    "markdown": "for a CI job summary",
    "sarif": "SARIF 2.1.0 at each test's file and line, for code scanning",
}
OPTION_HELP = (
    "Also write the findings as FORMAT to FILE (repeatable; FORMAT: "
    + "; ".join(f"{name}: {what}" for name, what in FORMATS.items())
    + ")."
)


class ReportRequestError(ValueError):
    """A `FORMAT=FILE` that names no format or no file (a usage error)."""


def parse_request(value: str) -> tuple[str, str]:
    """`sarif=reach.sarif` -> ("sarif", "reach.sarif")."""
    name, sep, path = value.partition("=")
    if not sep or not path or name not in FORMATS:
        raise ReportRequestError(
            f"expected FORMAT=FILE with FORMAT one of {'|'.join(FORMATS)}, got {value!r}"
        )
    return name, path


def parse_requests(values: Iterable[str]) -> list[tuple[str, str]]:
    """Each `FORMAT=FILE`; the same file twice is a usage error too (one would be lost)."""
    requests = [parse_request(value) for value in values]
    paths = [os.path.abspath(path) for _, path in requests]
    twice = sorted({path for path in paths if paths.count(path) > 1})
    if twice:
        raise ReportRequestError(f"two reports would be written to {twice[0]}")
    return requests


@dataclass(frozen=True)
class Entry:
    """One reach as it failed one test."""

    record: Record
    test: str = ""  # the test it failed ("" for a reach outside any test)
    # The test failed on this refusal, raised again by a class setup or a shared fixture
    # that was set up for another test (record["test"]).
    again: bool = False
    location: str = ""  # the test's FILE:LINE, else the record's own

    @classmethod
    def of(cls, record: Record) -> Entry:
        test, location = (str(record.get(key) or "") for key in ("test", "location"))
        return cls(record, test, location=location)

    def field(self, name: str) -> str:
        return str(self.record.get(name) or "")

    @property
    def file(self) -> str:
        """The test's file, relative to pytest's rootdir ("" when the record says none)."""
        where = self.location or self.test.partition("::")[0]
        path, sep, line = where.rpartition(":")
        return path if sep and line.isdigit() else where

    @property
    def line(self) -> int | None:
        path, sep, line = self.location.rpartition(":")
        return int(line) if sep and path and line.isdigit() else None

    @property
    def where(self) -> str:
        """`setup, in ClassSetupTest.setUpClass`, `call`, `collection`: the phase and fixture."""
        phase, fixture = self.field("phase"), self.field("fixture")
        return ", in ".join(part for part in (phase, fixture) if part)


@dataclass(frozen=True)
class ReachReport:
    """What a run, a check or a session found."""

    by: str  # `cloudguard run`, `cloudguard check`, `pytest`
    log: str
    exit_code: int
    entries: tuple[Entry, ...] = ()
    problems: tuple[str, ...] = ()  # why the log cannot be trusted: tampering, a torn log

    @classmethod
    def of(
        cls,
        by: str,
        log: str,
        exit_code: int,
        records: Iterable[Record],
        problems: Sequence[str] = (),
        again: Iterable[Entry] = (),
    ) -> ReachReport:
        entries = (*(Entry.of(record) for record in records), *again)
        return cls(by, log, exit_code, entries, tuple(problems))

    @property
    def reached(self) -> int:
        """How many reaches were recorded (a refusal raised again is not another reach)."""
        return sum(1 for entry in self.entries if not entry.again)

    def headline(self) -> str:
        if self.entries:
            again = sum(1 for entry in self.entries if entry.again)
            more = f", and {again} more test(s) failed on one of them" if again else ""
            return f"{self.reached} cloud reach(es) refused and recorded{more}"
        if self.exit_code == exit_codes.REFUSED_ADMISSION:
            return "the reach log cannot be trusted: no verdict but red"
        return "no cloud reach recorded"


def load(name: str) -> ModuleType:
    """The module of format `name`. `cloudguard run` loads each requested one before the
    command starts: nothing is imported after it (`cloudguard.guard.late_imports`)."""
    return importlib.import_module(f"{__name__}.{'json_report' if name == 'json' else name}")


def render(name: str, report: ReachReport) -> str:
    text: str = load(name).render(report)
    return text


def write(requests: Sequence[tuple[str, str]], report: ReachReport) -> list[str]:
    """Write each requested report; what could not be written, each said in one line."""
    from cloudguard.escape import one_line
    from cloudguard.private_files import write_private

    problems = []
    for name, path in requests:
        try:
            write_private(path, render(name, report))
        except OSError as error:
            why = error.strerror or str(error)
            problems.append(f"cannot write --report {name}={one_line(path, 300)}: {why}")
    return problems


def deliver(requests: Sequence[tuple[str, str]], report: ReachReport, err: TextIO) -> int:
    """Write each report and say on `err` what could not be. The exit code: the report's own,
    or 75 for a clean one whose report is missing (a CI step that reads it would find none;
    a red verdict stays red)."""
    problems = write(requests, report)
    for problem in problems:
        err.write(f"cloudguard: {problem}\n")
    if problems and report.exit_code == exit_codes.CLEAN:
        return exit_codes.DID_NOT_RUN
    return report.exit_code

"""The enabled plugin for one session: each test judged on its own records, then the verdict.

Each test runs with `CLOUDGUARD_TEST=<nodeid>` and the log position at its
start. After each phase the plugin looks at what was appended since (one
`stat` when nothing was: the common case costs nothing) and fails the test
for every record that belongs to it (`roles.Attribution`: plain, xdist
controller, xdist worker, nested in another session's test). At the end the
session that gives the verdict (not an xdist worker) judges every record
since it began, lists them in the terminal summary and exits 98 on any the
tests did not declare (`cloudguard.expect`); a log that cannot be trusted
fails the running test and the session closed (97).

Writes where a run must not write are judged the same way: a session that
runs its tests one at a time watches the ambient roots (`watch`) and records
each write in the test that was running; at the end the session that made
the seal compares the roots and the checkout with how they were
(`GuardSession.record_writes`) and records what no test was named for.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field

import pytest

from cloudguard import exit_codes
from cloudguard.documents import reach_log
from cloudguard.guard import alarm, inprocess, reach, report, seal, seal_registry, witness
from cloudguard.guard.hard import running
from cloudguard.guard.pytest import failure, where
from cloudguard.guard.pytest.early import DECIDED, EARLY, INHERITED, OUTER, WHERE, EarlySeal
from cloudguard.guard.pytest.roles import Attribution, Role
from cloudguard.guard.report import Entry, ReachReport
from cloudguard.guard.session import GuardSession
from cloudguard.guard.watch import Watcher

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cloudguard.guard.inprocess import Binding

Record = Mapping[str, object]

# The reaches a test declared (cloudguard.expect), carried to the controller on the
# teardown report: pytest's own channel for a plugin's per-test data (and JUnit's).
EXPECTED_PROPERTY = "cloudguard_expected"
# The refusal a test failed on that was recorded for another test (a class's setup raised
# again for each of its tests): carried the same way, for the session's report.
REFUSED_PROPERTY = "cloudguard_refused"


@dataclass
class TestWindow:
    """One test's view of the log: what it recorded, what it declared expected, what failed it."""

    nodeid: str
    checked: int  # where the session's records stood at the last look (GuardSession.cursor)
    reaches: list[Record] = field(default_factory=list)
    expected: list[int] = field(default_factory=list)  # indexes into reaches
    reported: list[int] = field(default_factory=list)

    def unreported(self) -> list[Record]:
        done = set(self.expected) | set(self.reported)
        fresh = [i for i in range(len(self.reaches)) if i not in done]
        self.reported.extend(fresh)
        return [self.reaches[i] for i in fresh]


class SessionGuard:
    """The enabled plugin for one session, in one `Role`."""

    def __init__(
        self,
        config: pytest.Config,
        *,
        role: Role,
        session: GuardSession,
        early: EarlySeal | None,
        outer_binding: Binding | None,
        provider_variable: str,
        reports: list[tuple[str, str]],
    ) -> None:
        self.config = config
        self.role = role
        self.session = session  # the seal and the log: made early, or joined
        self.log = session.log.path
        self.start = session.log.start
        self.watch = session.log.watch  # a replaced or shrunk log fails closed (97)
        self.early = early  # the seal and log this session made (None: inherited ones)
        # A session inside a guarded process (pytester in-process, a nested run): put the
        # outer binding back at the end instead of tearing the outer guards down.
        self.outer_binding = outer_binding
        self.provider_variable = provider_variable  # named in the provider's hint
        self.reports = reports  # --cloudguard-report FORMAT=FILE, written with the verdict
        self.attribution = Attribution(role)
        self.window: TestWindow | None = None
        self.expected: list[Record] = []  # reaches the tests declared (cloudguard.expect)
        self.summary: list[tuple[Record, bool]] = []  # (record, expected) for the whole session
        self.again: list[Entry] = []  # tests failed by a refusal recorded for another test
        self.red = False
        self.pytest_status = 0  # what pytest alone would have exited with, once a reach made it 98
        self.tampering_reported = 0  # the keeper's tampering entries already failed a test
        self.watcher = _watcher(role, session)  # writes into the ambient roots, per test

    # -- start and stop ------------------------------------------------------------------

    @classmethod
    def begin(cls, config: pytest.Config) -> SessionGuard:
        reports = _reports(config)
        rules = seal_registry.load_registry(search_from=config.rootpath)
        variable = next(iter(rules.provider_variables), "PROVIDER_VARIABLE")
        made = config.stash.get(EARLY, None)
        verified = config.stash.get(INHERITED, None)
        if made is None and verified is None and DECIDED not in config.stash:
            # The plugin was loaded too late to decide before the conftests: decide now.
            config.stash[WHERE] = where.start_collection()
            verified = seal.inherited_seal(os.environ, rules)  # verified, not assumed
        if made is None and verified is not None:
            # Under `cloudguard run`, or a worker of a sealed controller: the seal and the log
            # are already in place, and the seal line was printed by whoever made them.
            joined = GuardSession.join(rules, verified, os.environ)
            outer = inprocess.saved()
            inprocess.install(log=joined.log.path, policy=joined.policy(), keepers=joined.keepers)
            return cls(
                config,
                role=Role.of(config, inherited=True),
                session=joined,
                early=None,
                outer_binding=outer,
                provider_variable=variable,
                reports=reports,
            )
        if made is None:
            # The plugin was loaded too late for the early seal (a conftest's
            # `pytest_plugins`): seal now; what the suite declared so far is dropped too.
            made = EarlySeal.make(config, rules)
            made.announce(keep=False)
        return cls(
            config,
            role=Role.of(config, inherited=False),
            session=made.session,
            early=made,
            outer_binding=config.stash.get(OUTER, None),
            provider_variable=variable,
            reports=reports,
        )

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.watcher is not None:
            self.watcher.close()
        inprocess.restore(self.outer_binding)
        if self.early is not None:
            self.early.restore_environment()
        where.restore(config.stash.get(WHERE, {}))
        self.session.close(keep_log=self.red)

    # -- per test ------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        os.environ[reach.TEST_VARIABLE] = item.nodeid
        where.enter_test(item)
        running.mark(item.nodeid)  # under `run --hard`: the sink names this process's test
        self.attribution.own_tests.add(item.nodeid)
        self.window = TestWindow(item.nodeid, checked=self.session.cursor())
        try:
            return (yield)
        finally:
            self.window = None
            os.environ.pop(reach.TEST_VARIABLE, None)
            where.leave_test()
            running.mark(None)

    # tryfirst on a wrapper: outermost, so it sees the report after xfail/skip handling
    # and a reach in an xfail test is still a failure.
    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        window = self.window
        if window is None or window.nodeid != item.nodeid:
            return report
        if call.when == "setup" and report.passed:
            return report  # the call phase runs next and reads setup's records too: one stat less
        problems = self.watched_writes(window)
        try:
            self.refresh(window)
            reached = window.unreported()
        except reach_log.ReachLogError as error:
            reached = []
            problems.append(alarm.unreadable(error))
        refusal = failure.refusal_in(call.excinfo) if report.failed else None
        if reached:
            raised = ""
            if call.excinfo is not None and report.failed:
                raised = failure.raised_at(call.excinfo, item.config.rootpath, refusal is not None)
            problems.append(
                failure.failure_message(reached, self.log, self.provider_variable, raised=raised)
            )
        elif refusal is not None:
            # Raised again for this test by a class or shared fixture set up for another.
            problems.append(
                failure.refused_before(refusal.record, item.nodeid, self.provider_variable)
            )
            report.user_properties = [*report.user_properties, (REFUSED_PROPERTY, refusal.record)]
        tampering = self.session.tampering()
        problems += [
            f"cloudguard: tampering: {what}: failing closed"
            for what in tampering[self.tampering_reported :]
        ]
        self.tampering_reported = len(tampering)
        if problems:
            # The block replaces the traceback of the exception the reach caused: its frames
            # are the SDK's and cloudguard's. --tb=long or --full-trace keeps it (docs/pytest.md).
            config = item.config
            short = config.getoption("tbstyle", "auto") != "long" and not config.getoption(
                "fulltrace", False
            )
            failure.fail(
                report, item, "\n".join(problems), replace=short and bool(reached or refusal)
            )
        if call.when == "teardown" and window.expected:
            # A new list: the report's is the item's own, shared with its other reports.
            expected = [window.reaches[i] for i in window.expected]
            report.user_properties = [*report.user_properties, (EXPECTED_PROPERTY, expected)]
        return report

    def watched_writes(self, window: TestWindow) -> list[str]:
        """Record each write the watch saw since the last look, in this test's name (the
        records then fail it as its reaches do); what could not be recorded, said."""
        if self.watcher is None:
            return []
        problems = []
        for path, change, entry in self.watcher.poll():
            record = witness.write_record(
                reach.AMBIENT_WRITE, path, change, entry, "during the test", test=window.nodeid
            )
            problem = self.session.deliver(record)
            if problem:
                problems.append(f"cloudguard: a write into {path} was {problem}: failing closed")
        return problems

    def refresh(self, window: TestWindow) -> None:
        """Take what was recorded since the last look (nothing to read when nothing was)."""
        records, window.checked = self.session.since(window.checked)
        window.reaches.extend(r for r in records if self.attribution.belongs(r, window.nodeid))

    # -- the session's verdict (controller or plain process) -----------------------------

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # A controller runs no test: it learns its own from the workers' reports.
        self.attribution.own_tests.add(report.nodeid)
        for name, value in report.user_properties:
            if name == EXPECTED_PROPERTY and isinstance(value, list):
                self.expected.extend(value)
            elif name == REFUSED_PROPERTY and isinstance(value, dict):
                placed = where.location(report.location)
                self.again.append(Entry(value, report.nodeid, again=True, location=placed))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.role.gives_the_verdict:
            return
        try:
            self.session.record_writes()  # the roots and the checkout, compared with before
            records = self.session.records()
        except reach_log.ReachLogError as error:
            self.red = True
            sys.stderr.write(alarm.unreadable(error) + "\n")
            session.exitstatus = exit_codes.REFUSED_ADMISSION
            unreadable = ReachReport.of("pytest", self.log, session.exitstatus, (), [str(error)])
            report.deliver(self.reports, unreadable, sys.stderr)
            return
        tampering = self.session.tampering()
        if tampering:
            self.red = True
            for what in tampering:
                sys.stderr.write(f"cloudguard: tampering: {what}: failing closed\n")
            session.exitstatus = exit_codes.REFUSED_ADMISSION
        expected = list(self.expected)
        for record in filter(self.attribution.belongs, records):
            if record in expected:
                expected.remove(record)
                self.summary.append((record, True))
            else:
                self.summary.append((record, False))
        if any(not was_expected for _, was_expected in self.summary):
            # A reach is red whatever else ended the session (a Ctrl-C, a collection error, a
            # crash): 98, as `cloudguard run` gives; the summary names pytest's own status.
            self.red = True
            self.pytest_status = int(session.exitstatus)
            session.exitstatus = exit_codes.REACH_REFUSED
            if self.pytest_status == pytest.ExitCode.INTERNAL_ERROR:
                # pytest writes no terminal summary after an INTERNALERROR: say it here.
                self._write_summary(lambda line: sys.stderr.write(line + "\n"))
        if self.reports:
            found = ReachReport.of(
                "pytest",
                self.log,
                int(session.exitstatus),
                [record for record, was_expected in self.summary if not was_expected],
                tampering,
                self.again,
            )
            session.exitstatus = report.deliver(self.reports, found, sys.stderr)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.role.gives_the_verdict or not self.summary:
            return
        self._write_summary(terminalreporter.write_line, terminalreporter.section)

    def _write_summary(
        self, write_line: Callable[[str], object], section: Callable[..., object] | None = None
    ) -> None:
        """The reaches of the session and where the log is kept, line by line."""
        unexpected = [r for r, was_expected in self.summary if not was_expected]
        writes = sum(1 for r in unexpected if r.get("via") in reach.WRITE_VIAS)
        reaches = len(unexpected) - writes
        counted = []
        if reaches or not writes:
            counted.append(f"{reaches} cloud reach(es) refused and recorded")
        if writes:
            counted.append(f"{writes} write(s) where the run must not write")
        title = "cloudguard: " + ", ".join(counted)
        if section is not None:
            section(title, sep="=", red=bool(unexpected), bold=True)
        else:
            write_line(title)
        if self.session.keeper is None:
            # Joined: the records are kept by the run (or session) this one runs inside,
            # which lists each when it ends; each test's failure names its own. Once each.
            write_line(
                f"each is listed by the run that keeps the records ({self.log}) when it ends"
            )
            return
        for record, was_expected in self.summary:
            tag = "expected by its test (cloudguard.expect): " if was_expected else ""
            write_line(tag + alarm.describe(record))
        if unexpected:
            write_line(
                f"reach log kept: {self.log} (exit status {exit_codes.REACH_REFUSED}; "
                f"pytest's own: {self.pytest_status})"
            )


def _watcher(role: Role, session: GuardSession) -> Watcher | None:
    """A session that runs its tests one at a time can tell which test wrote: it watches the
    roots its seal's maker compares (its own witness, or the run's, named in the seal dir).
    Under xdist siblings run at once, and inotify does not say which process wrote."""
    if role is not Role.PLAIN:
        return None
    if session.witness is not None:
        found, skip = session.witness.watched()
    else:
        found, skip = witness.read_spec(str(session.seal.root))
    if not found:
        return None
    try:
        return Watcher(found, skip)
    except OSError:
        return None  # no inotify here: the comparison after the session still names each write


def _reports(config: pytest.Config) -> list[tuple[str, str]]:
    """`--cloudguard-report FORMAT=FILE`: malformed is pytest's usage error; a directory that
    does not exist is 75 before any test runs (the report could never be written)."""
    try:
        reports = report.parse_requests(config.getoption("cloudguard_report", None) or ())
    except report.ReportRequestError as error:
        raise pytest.UsageError(f"--cloudguard-report: {error}") from None
    for name, path in reports:
        report.load(name)  # now, before any test could write where it is loaded from
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            pytest.exit(
                f"cloudguard: cannot write --cloudguard-report {name}={path}: {directory} is "
                "not a directory",
                returncode=exit_codes.DID_NOT_RUN,
            )
    return reports


GUARD = pytest.StashKey[SessionGuard]()

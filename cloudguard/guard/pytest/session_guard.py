"""cloudguard's pytest plugin: every test sealed, every reach attributed to the test that made it.

Enabled by `--cloudguard`, by `cloudguard = true` in the pytest ini settings,
or by running under `cloudguard run` (then the run's seal and log are used).
When enabled, before the first test:

- `os.environ` is sealed exactly as `cloudguard run` seals a process (same
  registry, the project's cloudguard.toml included, same single seal line),
  so every subprocess gets the refusing shims, provider and sitecustomize;
- a reach log is armed (`--cloudguard-log PATH`, else a temporary file kept
  when the session is red);
- the in-process guards (botocore, azure-core, sockets) are installed.

Then each test runs with `CLOUDGUARD_TEST=<nodeid>` and the log position at
its start. After each phase the plugin looks at what was appended since
(one `stat` when nothing was: the common case costs nothing) and fails the
test for every record that belongs to it. Which records belong to whom
depends on the session's `Role` (plain, xdist controller, xdist worker,
nested in another session's test) and is decided in one place,
`SessionGuard.belongs`. The controller seals before the workers start (they
inherit the seal) and lists every reach in the terminal summary. Any
unexpected reach makes the session exit 98.

There is no marker, option or variable that lets a test reach a cloud.
"""

from __future__ import annotations

import enum
import os
import sys
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cloudguard import exit_codes
from cloudguard.documents import reach_log
from cloudguard.escape import one_line
from cloudguard.guard import alarm, hints, inprocess
from cloudguard.guard import registry as registries
from cloudguard.guard import seal as sealing
from cloudguard.guard.hard import running
from cloudguard.guard.inprocess.refusal import binding
from cloudguard.guard.refuse import Policy

Record = Mapping[str, object]
OuterBinding = tuple[str | None, Policy | None, Callable[[], Policy | None] | None]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cloudguard", "cloudguard: seal the session, fail tests that reach")
    group.addoption(
        "--cloudguard",
        action="store_true",
        default=False,
        help="Seal the session and fail every test that reaches a real cloud.",
    )
    group.addoption(
        "--cloudguard-log",
        metavar="PATH",
        default=None,
        help="Reach log to arm (default: a temporary file, kept when the session is red).",
    )
    parser.addini(
        "cloudguard", type="bool", default=False, help="Enable cloudguard (as --cloudguard)."
    )


def _under_seal(environ: Mapping[str, str]) -> bool:
    """Running under `cloudguard run`, or an xdist worker of a sealed controller."""
    return bool(environ.get(reach_log.LOG_VARIABLE) and environ.get(sealing.SEAL_DIR_VARIABLE))


def _enabled(config: pytest.Config) -> bool:
    early_options = getattr(config, "known_args_namespace", None)
    return bool(
        config.getoption("cloudguard", False)
        or getattr(early_options, "cloudguard", False)
        or config.getini("cloudguard")
        or _under_seal(os.environ)
    )


# Seal only the ambient. A wrapper runs around every other implementation, pytest-env's
# tryfirst one included, so the seal is made before pytest-env applies the suite's `env =`
# and before the initial conftest.py files are imported: what the suite declares is the
# suite's own and survives (listed as kept); what the shell gave the session is dropped.
@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> Generator[None, None, None]:
    early: EarlySeal | None = None
    if _enabled(early_config):
        early_config.stash[_DECIDED] = True
        try:
            registry = registries.load_registry(search_from=early_config.rootpath)
            # Verified here, on what the session inherited, before the suite adds its own.
            inherited = sealing.inherited_seal(os.environ, registry)
            if inherited is not None:
                early_config.stash[_INHERITED] = inherited
            else:
                early = EarlySeal.make(early_config)
        except (registries.RegistryError, reach_log.ReachLogError, OSError) as error:
            early_config.stash[_ADMISSION] = error  # refused in pytest_configure (exit 97)
    try:
        return (yield)
    finally:
        if early is not None:
            kept = early.kept()
            early.seal.keep(kept)  # the workers inherit them and verify the seal against it
            early.fill_sentinels()
            sys.stderr.write(sealing.seal_line(early.dropped, kept=kept) + "\n")
            sys.stderr.flush()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if not _enabled(config):
        return
    try:
        refused = config.stash.get(_ADMISSION, None)
        if refused is not None:
            raise refused
        guard = SessionGuard.begin(config)
    except (registries.RegistryError, reach_log.ReachLogError, OSError) as error:
        pytest.exit(
            f"cloudguard: refused admission: {error}", returncode=exit_codes.REFUSED_ADMISSION
        )
    config.stash[_GUARD] = guard
    config.pluginmanager.register(guard, "cloudguard-session")


@dataclass
class EarlySeal:
    """The session's own seal, made before the suite's declarations (pytest-env, conftest)."""

    registry: registries.Registry
    seal: sealing.Seal
    log: str
    start: int
    owned_log: bool
    original_environ: dict[str, str]
    sealed: dict[str, str]
    dropped: list[str]

    @classmethod
    def make(cls, config: pytest.Config) -> EarlySeal:
        registry = registries.load_registry(search_from=config.rootpath)
        # Before pytest_configure only the early parse holds the options.
        requested = getattr(config.known_args_namespace, "cloudguard_log", None)
        log, start, owned_log = _arm(config.getoption("cloudguard_log") or requested)
        seal = sealing.create_seal(registry, log=log)
        env, dropped = sealing.sealed_environment(os.environ, registry, seal, log)
        # Inherited from an outer pytest (this session is some test's subprocess): they name
        # that test, not ours, and would attribute our reaches outside any test to it.
        for inherited in (reach_log.TEST_VARIABLE, "PYTEST_CURRENT_TEST"):
            env.pop(inherited, None)
        # The sentinels fill only what the suite leaves unset: set after pytest-env and the
        # conftest files, so a suite's own fake (pytest-env's `D:` defaults too) wins.
        for name in seal.sentinels():
            env.pop(name, None)
        original = dict(os.environ)
        os.environ.clear()
        os.environ.update(env)
        # Installed now, so a conftest that reaches while it is imported is seen too.
        config.stash[_OUTER] = _outer_binding()
        inprocess.install(log=log, policy=sealing.policy(registry, seal))
        early = cls(registry, seal, log, start, owned_log, original, env, dropped)
        config.stash[_EARLY] = early
        return early

    def fill_sentinels(self) -> None:
        for name, value in self.seal.sentinels().items():
            os.environ.setdefault(name, value)

    def kept(self) -> list[str]:
        """Seal-covered names the suite itself set or changed after the seal: its own."""
        return sorted(
            name
            for name, value in os.environ.items()
            if self.registry.covers(name) and self.sealed.get(name) != value
        )


_EARLY = pytest.StashKey[EarlySeal]()
_INHERITED = pytest.StashKey[sealing.Seal]()  # a verified seal this session runs under
_DECIDED = pytest.StashKey[bool]()  # the early hook ran: begin() does not decide again
_ADMISSION = pytest.StashKey[Exception]()
_OUTER = pytest.StashKey["OuterBinding | None"]()


_GUARD = pytest.StashKey["SessionGuard"]()
# The reaches a test declared (cloudguard.expect), carried to the controller on the
# teardown report: pytest's own channel for a plugin's per-test data (and JUnit's).
EXPECTED_PROPERTY = "cloudguard_expected"


class Role(enum.Enum):
    """Which session this is: it decides which records in the reach log are its to judge.

    Every record names the test that made it (`CLOUDGUARD_TEST`), or none when a child
    scrubbed its environment. A session that has the log to itself judges every record,
    unnamed ones included; a session that shares it with others (an xdist worker with its
    siblings, a nested session with the outer session) takes only records naming one of
    its own tests, and leaves the rest to whoever has the whole log.
    """

    PLAIN = "plain"  # runs its tests itself; the log is its own (or its `cloudguard run`'s)
    CONTROLLER = "controller"  # xdist controller: runs no test, judges all its workers wrote
    WORKER = "worker"  # xdist worker: fails its own tests; the controller gives the verdict
    NESTED = "nested"  # started inside another session's test, on that session's log

    @property
    def has_the_whole_log(self) -> bool:
        return self in (Role.PLAIN, Role.CONTROLLER)

    @property
    def gives_the_verdict(self) -> bool:
        """Judges the whole session at its end, exit status and terminal summary."""
        return self is not Role.WORKER

    @classmethod
    def of(cls, config: pytest.Config, *, inherited: bool) -> Role:
        """`inherited`: the session runs under a seal it verified, not one it made."""
        if hasattr(config, "workerinput"):
            return cls.WORKER
        # A test's subprocess inherits its session's seal with the test's name (a worker's
        # subprocess, with the worker's id): it writes to that session's log.
        if inherited and _outer_test(os.environ) is not None:
            return cls.NESTED
        if config.getoption("dist", "no") != "no" and not config.getoption("collectonly"):
            return cls.CONTROLLER
        return cls.PLAIN


def _outer_test(environ: Mapping[str, str]) -> str | None:
    """The test (or xdist worker) of another session this process runs inside, if any."""
    for variable in (reach_log.TEST_VARIABLE, "PYTEST_CURRENT_TEST", "PYTEST_XDIST_WORKER"):
        if environ.get(variable):
            return environ[variable]
    return None


@dataclass
class TestWindow:
    """One test's view of the log: what it recorded, what it declared expected, what failed it."""

    nodeid: str
    checked: int  # byte offset up to which the log has been read for this test
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
        log: str,
        start: int,
        early: EarlySeal | None,
        outer_binding: OuterBinding | None,
        provider_variable: str,
    ) -> None:
        self.config = config
        self.role = role
        self.log = log
        self.start = start
        self.watch = alarm.LogWatch(log)  # a replaced or shrunk log fails closed (97)
        self.early = early  # the seal and log this session made (None: inherited ones)
        # A session inside a guarded process (pytester in-process, a nested run): put the
        # outer binding back at the end instead of tearing the outer guards down.
        self.outer_binding = outer_binding
        self.provider_variable = provider_variable  # named in the provider's hint
        self.own_tests: set[str] = set()  # run here, or (controller) reported by a worker
        self.window: TestWindow | None = None
        self.expected: list[Record] = []  # reaches the tests declared (cloudguard.expect)
        self.summary: list[tuple[Record, bool]] = []  # (record, expected) for the whole session
        self.red = False

    def belongs(self, record: Record, test: str | None = None) -> bool:
        """Is `record` this session's to judge: for `test`, or (None) at the session's end?

        The one rule of attribution, for every role (see `Role`).
        """
        named = record.get("test")
        if not named:
            return self.role.has_the_whole_log
        if test is not None:
            return named == test
        return self.role.has_the_whole_log or named in self.own_tests

    # -- start and stop ------------------------------------------------------------------

    @classmethod
    def begin(cls, config: pytest.Config) -> SessionGuard:
        registry = registries.load_registry(search_from=config.rootpath)
        variable = next(iter(registry.provider_variables), "PROVIDER_VARIABLE")
        early = config.stash.get(_EARLY, None)
        verified = config.stash.get(_INHERITED, None)
        if early is None and verified is None and _DECIDED not in config.stash:
            # The plugin was loaded too late to decide before the conftests: decide now.
            verified = sealing.inherited_seal(os.environ, registry)  # verified, not assumed
        if early is None and verified is not None:
            # Under `cloudguard run`, or a worker of a sealed controller: the seal and the log
            # are already in place, and the seal line was printed by whoever made them.
            log = os.environ[reach_log.LOG_VARIABLE]
            start = reach_log.read(log).end
            outer = _outer_binding()
            inprocess.install(log=log, policy=sealing.policy(registry, verified))
            return cls(
                config,
                role=Role.of(config, inherited=True),
                log=log,
                start=start,
                early=None,
                outer_binding=outer,
                provider_variable=variable,
            )
        if early is None:
            # The plugin was loaded too late for the early seal (a conftest's
            # `pytest_plugins`): seal now; what the suite declared so far is dropped too.
            early = EarlySeal.make(config)
            early.fill_sentinels()
            sys.stderr.write(sealing.seal_line(early.dropped) + "\n")
            sys.stderr.flush()
        return cls(
            config,
            role=Role.of(config, inherited=False),
            log=early.log,
            start=early.start,
            early=early,
            outer_binding=config.stash.get(_OUTER, None),
            provider_variable=variable,
        )

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.outer_binding is None:
            inprocess.uninstall()
        else:
            log, policy, find_policy = self.outer_binding
            inprocess.install(log=log, policy=policy, find_policy=find_policy)
        if self.early is not None:
            os.environ.clear()
            os.environ.update(self.early.original_environ)
            self.early.seal.remove()
        self.watch.close()
        if self.early is not None and self.early.owned_log and not self.red:
            Path(self.log).unlink(missing_ok=True)

    # -- per test ------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        os.environ[reach_log.TEST_VARIABLE] = item.nodeid
        running.mark(item.nodeid)  # under `run --hard`: the sink names this process's test
        self.own_tests.add(item.nodeid)
        self.window = TestWindow(item.nodeid, checked=_size(self.log))
        try:
            return (yield)
        finally:
            self.window = None
            os.environ.pop(reach_log.TEST_VARIABLE, None)
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
        try:
            self.refresh(window)
            reached = window.unreported()
        except reach_log.ReachLogError as error:
            reached = []
            _fail(report, item, f"cloudguard: {error}: the alarm cannot be read, failing closed")
        if reached:
            _fail(report, item, failure_message(reached, self.log, self.provider_variable))
        if call.when == "teardown" and window.expected:
            # A new list: the report's is the item's own, shared with its other reports.
            expected = [window.reaches[i] for i in window.expected]
            report.user_properties = [*report.user_properties, (EXPECTED_PROPERTY, expected)]
        return report

    def refresh(self, window: TestWindow) -> None:
        """Read what was appended since the last look; one stat when nothing was."""
        if self.watch.verify() == window.checked:
            return
        log = reach_log.read(self.log, start=window.checked)
        window.checked = log.end
        window.reaches.extend(r for r in log.reaches if self.belongs(r, window.nodeid))

    # -- the session's verdict (controller or plain process) -----------------------------

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.own_tests.add(report.nodeid)  # a controller learns its tests from the workers
        for name, value in report.user_properties:
            if name == EXPECTED_PROPERTY and isinstance(value, list):
                self.expected.extend(value)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.role.gives_the_verdict:
            return
        try:
            self.watch.verify()
            records = reach_log.read(self.log, start=self.start).reaches
        except reach_log.ReachLogError as error:
            self.red = True
            sys.stderr.write(f"cloudguard: {error}: the alarm cannot be read, failing closed\n")
            session.exitstatus = exit_codes.REFUSED_ADMISSION
            return
        expected = list(self.expected)
        for record in filter(self.belongs, records):
            if record in expected:
                expected.remove(record)
                self.summary.append((record, True))
            else:
                self.summary.append((record, False))
        if any(not was_expected for _, was_expected in self.summary):
            self.red = True
            if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
                session.exitstatus = exit_codes.REACH_REFUSED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.role.gives_the_verdict or not self.summary:
            return
        unexpected = [r for r, was_expected in self.summary if not was_expected]
        title = f"cloudguard: {len(unexpected)} cloud reach(es) refused and recorded"
        terminalreporter.section(title, sep="=", red=bool(unexpected), bold=True)
        for record, was_expected in self.summary:
            tag = "expected by its test (cloudguard.expect): " if was_expected else ""
            terminalreporter.write_line(tag + alarm.describe(record))
        if unexpected:
            terminalreporter.write_line(
                f"reach log kept: {self.log} (exit status {exit_codes.REACH_REFUSED})"
            )


def _outer_binding() -> OuterBinding | None:
    """The guards' binding before this session, when they were already installed."""
    if not inprocess.installed():
        return None
    return (binding.log, binding.policy, binding.find_policy)


# -- the log -------------------------------------------------------------------------------


def _arm(requested: str | None) -> tuple[str, int, bool]:
    """(path, offset where this session starts, whether the file is ours to remove)."""
    by = "cloudguard pytest plugin"
    if requested:
        return requested, alarm.arm_or_continue(requested, by=by), False
    return (*alarm.arm_temporary(by=by), True)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1  # deleted: differs from any offset, so the next read names the problem


# -- the failure ---------------------------------------------------------------------------


def failure_message(
    reached: Sequence[Record], log: str, provider_variable: str = "PROVIDER_VARIABLE"
) -> str:
    named = ", ".join(dict.fromkeys(_named(r) for r in reached))
    lines = [
        f"cloudguard: this test reached a real cloud: {named}",
        f"Each attempt ({len(reached)}) was refused before any packet left and recorded;",
        "the record fails the test even where the exception was caught.",
    ]
    for record in reached:
        lines.append("  " + alarm.describe(record).replace("\n", "\n  "))
    lines.append(f"Reach log: {log}")
    lines.append("To make the test hermetic:")
    # `via` is read back from the log: escaped like every other field of a record.
    for via in dict.fromkeys(one_line(str(r.get("via")), 60) for r in reached):
        advice = hints.for_channel(via, variable=provider_variable, indent="    ")
        lines.append(f"  {via}: {advice}")
    return "\n".join(lines)


def _named(record: Record) -> str:
    """`botocore -> sts.us-east-1.amazonaws.com (sts GetCallerIdentity)`."""
    via, target, operation = (record.get(key) for key in ("via", "target", "operation"))
    named = f"{via} -> {target}" + (f" ({operation})" if operation else "")
    return one_line(named, 300)  # read back from the log: escaped as `alarm.describe` does


def _fail(report: pytest.TestReport, item: pytest.Item, message: str) -> None:
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


# -- the fixture ---------------------------------------------------------------------------


class CloudGuard:
    """The current test's reaches, as the plugin sees them."""

    def __init__(self, guard: SessionGuard, nodeid: str) -> None:
        self._guard = guard
        self._nodeid = nodeid

    def _window(self) -> TestWindow:
        window = self._guard.window
        if window is None or window.nodeid != self._nodeid:
            raise RuntimeError("the cloudguard fixture is used outside its own test")
        self._guard.refresh(window)
        return window

    @property
    def log(self) -> str:
        return self._guard.log

    @property
    def reaches(self) -> tuple[Record, ...]:
        """Every reach this test has recorded so far, expected or not."""
        return tuple(self._window().reaches)

    def expect(self, *, via: str, target: str | None = None) -> list[Record]:
        """Assert that this test's reach through `via` (to `target`) was refused and recorded.

        The matching records, and only those, no longer fail the test: the test states
        in its own code that it made them. The call was still refused; nothing was let
        through. Raises AssertionError when no such reach was recorded.
        """
        window = self._window()
        matched = [
            i
            for i, record in enumerate(window.reaches)
            if record.get("via") == via
            and (target is None or record.get("target") == target)
            and i not in window.expected
            and i not in window.reported
        ]
        if not matched:
            seen = ", ".join(f"{r.get('via')} -> {r.get('target')}" for r in window.reaches)
            wanted = via + (f" -> {target}" if target else "")
            raise AssertionError(
                f"cloudguard: expected a reach {wanted} refused and recorded by this test; "
                f"recorded: {seen or 'none'}"
            )
        window.expected.extend(matched)
        return [window.reaches[i] for i in matched]


@pytest.fixture
def cloudguard(request: pytest.FixtureRequest) -> CloudGuard:
    """This test's reaches (`.reaches`) and `.expect(via=..., target=...)`."""
    guard = request.config.stash.get(_GUARD, None)
    if guard is None:
        pytest.fail(
            "the cloudguard fixture needs the plugin enabled: pass --cloudguard, or set "
            "`cloudguard = true` in the pytest ini settings",
            pytrace=False,
        )
    return CloudGuard(guard, request.node.nodeid)

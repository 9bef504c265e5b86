"""The negative controls' harness: break a promise on purpose, require its named check to fail.

A control copies the package that keeps the promise (the core `cloudguard`, or an
adapter's), applies one mutation to the copy (one edit, or several when one promise
stands in several places: `also`), and runs the named tests with the copy first on
PYTHONPATH (shims a mutant seal writes import the mutant too). It passes only when

- every named test passes on the unbroken code, in the same session (one shared run
  of every test a control module names, on an unmutated copy: `unbroken`; a worker
  that would wait for another's making it runs its own control's tests), and
- on the mutant every named test fails AT ITS NAMED CHECK: the exception that ended
  the test carries that check's marker (tests/named_checks.py), which only the
  failing check can format. A test that goes red at another check, or for a reason
  that is no check at all (an import error, a crash, a timeout), does not count, and
  neither does a check whose words appear in the test's source or the program's output.

A promise whose tests stay green when it is broken, or go red for another reason, is
not tested.

LEGACY MODE (controls written for the earlier harness, not yet converted): a mutation
given `reason=` instead of `check=` is judged as that harness judged it: every named
test fails and its own failure (pytest's `E` lines, never the echoed source) contains
each reason text. It shares the unbroken run. The old entry points stay as thin
wrappers: `assert_turns_red(tmp_path, mutation)` (no unbroken run of its own) and
`assert_green_unmutated(tmp_path, mutations)`. docs/proof.md lists each legacy control
as "matched by message; to convert to a named check".
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

import cloudguard

REPO = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
PACKAGE = Path(cloudguard.__file__).resolve().parent
INNER_TIMEOUT = 300

# What a named test must fail with: one, every one of a tuple, or each test its own.
Expected = str | tuple[str, ...] | Mapping[str, str | tuple[str, ...]]


@dataclass(frozen=True)
class Mutation:
    name: str
    module: str  # file inside the package
    original: str
    broken: str
    tests: tuple[str, ...]  # node ids that must fail
    # The named check (tests/named_checks.py) each named test must fail at (a tuple: every one
    # of them, a test that reports several at once); a mapping gives each test its own.
    check: Expected | None = None
    package: Path = PACKAGE  # the package mutated: the core, or an adapter's
    # Further edits of the same mutation, (module, original, broken) each: one promise whose
    # code stands in more than one place (a pid namespace is entered here, its /proc there).
    also: tuple[tuple[str, str, str], ...] = ()
    # LEGACY, instead of `check`: text (every text) each named test's own failure message
    # must contain, as the earlier harness judged. To convert to a named check.
    reason: Expected | None = None

    def __post_init__(self) -> None:
        assert (self.check is None) != (self.reason is None), (
            f"mutation {self.name!r}: give check= (or, legacy, reason=), one of them"
        )
        for expected in (self.check, self.reason):  # a mapping names each test, no other
            assert not isinstance(expected, Mapping) or set(expected) == set(self.tests), (
                f"mutation {self.name!r}: its mapping does not name exactly its tests"
            )

    @property
    def legacy(self) -> bool:
        """Judged by message (`reason=`), not yet at a named check."""
        return self.reason is not None

    def checks_of(self, test: str) -> tuple[str, ...]:
        return _for_test(self.check, test)

    def reasons_for(self, test: str) -> tuple[str, ...]:
        return _for_test(self.reason, test)


def _for_test(expected: Expected | None, test: str) -> tuple[str, ...]:
    if expected is None:
        return ()
    one = expected[test] if isinstance(expected, Mapping) else expected
    return (one,) if isinstance(one, str) else tuple(one)


@dataclass(frozen=True)
class Verdict:
    outcome: str  # passed, failed, skipped (the worst of the test's phases)
    checks: tuple[str, ...]  # the named checks its failure carries
    message: str
    raised: str = ""  # its failures' `E` lines, as pytest reports them (legacy judging only)

    @classmethod
    def from_json(cls, saved: Mapping[str, object]) -> Verdict:
        checks = saved["checks"]
        assert isinstance(checks, list)
        return cls(str(saved["outcome"]), tuple(checks), str(saved["message"]),
                   str(saved.get("raised", "")))  # fmt: skip


Verdicts = Mapping[str, Verdict]


def copy_package(root: Path, package: Path = PACKAGE) -> Path:
    """The package with its compiled modules (pytest's rewritten ones too): copied with their
    sources' times, they stay valid and spare each inner run recompiling the package."""
    shutil.copytree(package, root / package.name)
    return root


def mutant(tmp_path: Path, mutation: Mutation) -> Path:
    root = copy_package(tmp_path / "mutant", mutation.package)
    edited: set[Path] = set()
    for module, original, broken in ((mutation.module, mutation.original, mutation.broken),
                                     *mutation.also):  # fmt: skip
        target = root / mutation.package.name / module
        source = target.read_text()
        assert source.count(original) == 1, f"mutation {mutation.name!r} no longer applies"
        target.write_text(source.replace(original, broken))
        for compiled in target.parent.glob(f"__pycache__/{target.stem}.*.pyc"):
            compiled.unlink()  # never the unbroken module's code, whatever the clock says
        edited.add(target)
    for target in (t for t in edited if t.suffix == ".py"):  # a mutant that does not compile
        # breaks every promise, none alone
        try:
            compile(target.read_text(), str(target), "exec")
        except SyntaxError as error:
            raise AssertionError(f"mutation {mutation.name!r} does not compile: {error}") from None
    return root


def run_tests(root: Path, tests: Sequence[str]) -> Verdicts:
    """Run `tests` with the package copies at `root` imported first; each test's verdict.

    The working directory is `root`, not the repo: `python -m` puts the working
    directory first on sys.path, and the repo's own package must not win. The
    named-checks plugin writes each test's outcome and failed checks to a file.
    """
    report = root / "named-checks.json"
    try:
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
             "-p", "named_checks", f"--named-checks={report}",
             "--rootdir", str(REPO), "-c", str(REPO / "pyproject.toml"),
             *(str(REPO / test) for test in tests)],
            cwd=root,
            env=_own_session_env(root),
            capture_output=True,
            text=True,
            timeout=INNER_TIMEOUT,
            check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"{list(tests)} did not finish in {INNER_TIMEOUT} s") from exc
    output = result.stdout + result.stderr
    assert report.is_file(), f"the run wrote no verdicts (exit {result.returncode}):\n{output}"
    verdicts = {
        nodeid: Verdict.from_json(v) for nodeid, v in json.loads(report.read_text()).items()
    }
    missing = [test for test in tests if test not in verdicts]
    assert not missing, f"{missing} did not run:\n{output}"
    return verdicts


def _own_session_env(root: Path) -> dict[str, str]:
    """The outer session's environment minus its cloudguard binding and xdist identity.

    The inner pytest then seals itself with its own log (the repository's ini
    enables the plugin): a sibling test's reach in the outer session's shared
    log must not turn the inner run red. tests/ is on the path for the plugin.
    """
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("CLOUDGUARD_", "PYTEST_XDIST_", "PYTEST_CURRENT_TEST"))
    }
    return dict(env, PYTHONPATH=os.pathsep.join([str(root), str(TESTS)]), PYTEST_ADDOPTS="")


_unbroken: dict[str, Verdicts] = {}


def unbroken(
    factory: pytest.TempPathFactory, mutations: Sequence[Mutation], needed: Sequence[str] = ()
) -> Verdicts:
    """Every named test of `mutations`, run once on unmutated copies of their packages.

    Once per session: a module's controls share the run, and so do xdist's workers (the
    file lives in the directory their base temporary directories share, under a lock).
    A worker that finds another making it runs only the tests it `needed` instead of
    waiting: its core is not left idle for as long as the whole run takes.
    """
    tests = sorted({test for m in mutations for test in m.tests})
    packages = sorted({m.package for m in mutations})
    key = hashlib.sha256(json.dumps([tests, [str(p) for p in packages]]).encode()).hexdigest()
    if key in _unbroken:
        return _unbroken[key]
    base = factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    saved = shared / f"unbroken-{key[:16]}.json"
    with open(shared / f"unbroken-{key[:16]}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | (fcntl.LOCK_NB if needed else 0))
        except BlockingIOError:
            return run_tests(_unmutated(factory, packages), needed)
        if not saved.exists():
            verdicts = run_tests(_unmutated(factory, packages), tests)
            saved.write_text(json.dumps({t: v.__dict__ for t, v in verdicts.items()}))
    loaded = {t: Verdict.from_json(v) for t, v in json.loads(saved.read_text()).items()}
    _unbroken[key] = loaded
    return loaded


def _unmutated(factory: pytest.TempPathFactory, packages: Sequence[Path]) -> Path:
    root = factory.mktemp("unbroken")
    for package in packages:
        copy_package(root, package)
    return root


def assert_turns_red(
    factory: pytest.TempPathFactory | Path,
    mutation: Mutation,
    siblings: Sequence[Mutation] = (),
) -> None:
    """Each named test passes unbroken, and fails at its named check with `mutation`.

    `siblings`: the controls of the same module, whose named tests the unbroken run holds.
    The mutant runs first: meanwhile another worker may be making the unbroken run.
    LEGACY call, `assert_turns_red(tmp_path, mutation)`: the mutant's run alone (its
    module's `assert_green_unmutated` runs the unbroken code).
    """
    if isinstance(factory, Path):
        judge(mutation, run_tests(mutant(factory, mutation), mutation.tests))
        return
    red = run_tests(mutant(factory.mktemp("control"), mutation), mutation.tests)
    green = unbroken(factory, siblings, mutation.tests)
    for test in mutation.tests:
        assert test in green, f"{test} was not in the unbroken run"
        assert green[test].outcome == "passed", (
            f"{test} does not pass on the unbroken code ({green[test].outcome}):\n"
            f"{green[test].message}"
        )
    judge(mutation, red)


def judge(mutation: Mutation, verdicts: Verdicts) -> None:
    if mutation.legacy:
        assert_each_red_for_its_reason(mutation, verdicts)
    else:
        assert_each_red_at_its_check(mutation, verdicts)


def assert_each_red_at_its_check(mutation: Mutation, verdicts: Verdicts) -> None:
    for test in mutation.tests:
        verdict = verdicts[test]
        assert verdict.outcome == "failed", (
            f"{test} stayed green with {mutation.name!r} ({verdict.outcome})"
        )
        missing = [check for check in mutation.checks_of(test) if check not in verdict.checks]
        assert not missing, (
            f"{test} went red at another check with {mutation.name!r}: not {missing} but "
            f"{list(verdict.checks) or 'no named check'}:\n{verdict.message}"
        )


# -- LEGACY: the earlier harness's judging and entry point, until each control is converted ------


def assert_each_red_for_its_reason(mutation: Mutation, verdicts: Verdicts) -> None:
    """Every named test failed, each reason text in its own failure (its `E` lines)."""
    for test in mutation.tests:
        verdict = verdicts[test]
        assert verdict.outcome == "failed", (
            f"{test} stayed green with {mutation.name!r} ({verdict.outcome})"
        )
        for reason in mutation.reasons_for(test):
            assert reason in verdict.raised, (
                f"{test} went red for another reason with {mutation.name!r} "
                f"(its own message lacks {reason!r}):\n{verdict.raised}"
            )


def assert_green_unmutated(tmp_path: Path, mutations: Sequence[Mutation]) -> None:
    """The old control's control: the same tests, on unmutated copies, pass."""
    root = tmp_path / "copy"
    for package in sorted({m.package for m in mutations}):
        copy_package(root, package)
    tests = sorted({test for m in mutations for test in m.tests})
    verdicts = run_tests(root, tests)
    red = {t: v.message for t, v in verdicts.items() if v.outcome != "passed"}
    assert not red, f"named tests do not pass on the unbroken code: {red}"

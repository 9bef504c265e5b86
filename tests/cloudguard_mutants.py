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

import cloudguard_forkserver
import pytest

import cloudguard

REPO = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
PACKAGE = Path(cloudguard.__file__).resolve().parent
INNER_TIMEOUT = 300
# Each cloud's SDK and its fake's libraries, as the adapters' tests import them: a control of
# what runs above the in-process guards (a sweep, a reaper) asks its runs' fork server to
# import them once, not each run (in CPU a run: google-cloud-compute 5-6 s, the Azure SDKs
# ~3 s, boto3 and moto ~1.5 s). Never the guards' own controls: a preloaded SDK is patched at
# once, not on import (tests/cloudguard_forkserver.py). A mutant and its unbroken run share
# one server's kind; each kind's server starts only in a worker that runs one of its controls.
AWS_SDKS = ("boto3", "moto.server")
AZURE_SDKS = (
    "azure.identity",
    "azure.mgmt.compute",
    "azure.mgmt.network",
    "azure.mgmt.resource",
    "azure.mgmt.resourcegraph",
    "trustme",
)
GCP_SDKS = ("google.cloud.compute_v1", "google.cloud.asset_v1")

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
    check: Expected
    package: Path = PACKAGE  # the package mutated: the core, or an adapter's
    # Further edits of the same mutation, (module, original, broken) each: one promise whose
    # code stands in more than one place (a pid namespace is entered here, its /proc there).
    also: tuple[tuple[str, str, str], ...] = ()

    def __post_init__(self) -> None:
        assert not isinstance(self.check, Mapping) or set(self.check) == set(self.tests), (
            f"mutation {self.name!r}: its mapping does not name exactly its tests"
        )

    def checks_of(self, test: str) -> tuple[str, ...]:
        one = self.check[test] if isinstance(self.check, Mapping) else self.check
        return (one,) if isinstance(one, str) else tuple(one)


@dataclass(frozen=True)
class Verdict:
    outcome: str  # passed, failed, skipped (the worst of the test's phases)
    checks: tuple[str, ...]  # the named checks its failure carries
    message: str

    @classmethod
    def from_json(cls, saved: Mapping[str, object]) -> Verdict:
        checks = saved["checks"]
        assert isinstance(checks, list)
        return cls(str(saved["outcome"]), tuple(checks), str(saved["message"]))


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


def run_tests(root: Path, tests: Sequence[str], preload: Sequence[str] = ()) -> Verdicts:
    """Run `tests` with the package copies at `root` imported first; each test's verdict.

    The working directory is `root`, not the repo: `python -m` puts the working
    directory first on sys.path, and the repo's own package must not win. The
    named-checks plugin writes each test's outcome and failed checks to a file. The run is
    a child of this process's fork server when it has one (tests/cloudguard_forkserver.py:
    the same run, without the interpreter's and pytest's start-up, nor `preload`'s imports),
    else a fresh interpreter.
    """
    report = root / "named-checks.json"
    args = ["-p", "no:cacheprovider", "-p", "no:xdist", "-q",
            "-p", "named_checks", f"--named-checks={report}",
            "--rootdir", str(REPO), "-c", str(REPO / "pyproject.toml"),
            *(str(REPO / test) for test in tests)]  # fmt: skip
    env = _own_session_env(root)
    result: subprocess.CompletedProcess[str] | cloudguard_forkserver.Completed
    try:
        result = cloudguard_forkserver.run(
            args, cwd=root, env=env, timeout=INNER_TIMEOUT, preload=preload
        )
    except cloudguard_forkserver.TimedOut:
        raise AssertionError(f"{list(tests)} did not finish in {INNER_TIMEOUT} s") from None
    except cloudguard_forkserver.Unavailable:
        try:
            result = subprocess.run(
                [sys.executable, "-m", "pytest", *args],
                cwd=root,
                env=env,
                capture_output=True,
                text=True,
                timeout=INNER_TIMEOUT,
                check=False,
            )
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
    Bytecode may be written: pytest keeps a test module it rewrote (its asserts) only
    then, and about 500 inner runs rewrote the same modules again (0.2 s a run for the
    reaper's; a shell's PYTHONDONTWRITEBYTECODE is kept out of them, as `dev.py`
    compiles everything else once).
    """
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("CLOUDGUARD_", "PYTEST_XDIST_", "PYTEST_CURRENT_TEST"))
        and name not in (cloudguard_forkserver.SWITCH, "PYTHONDONTWRITEBYTECODE")
    }
    return dict(env, PYTHONPATH=os.pathsep.join([str(root), str(TESTS)]), PYTEST_ADDOPTS="")


_unbroken: dict[str, Verdicts] = {}


def unbroken(
    factory: pytest.TempPathFactory,
    mutations: Sequence[Mutation],
    needed: Sequence[str] = (),
    preload: Sequence[str] = (),
) -> Verdicts:
    """Every named test of `mutations`, run once on unmutated copies of their packages.

    Once per session: a module's controls share the run, and so do xdist's workers (the
    file lives in the directory their base temporary directories share, under a lock).
    A worker that finds another making it runs only the tests it `needed` instead of
    waiting: its core is not left idle for as long as the whole run takes.
    """
    tests = sorted({test for m in mutations for test in m.tests})
    packages = sorted({m.package for m in mutations})
    made = [tests, [str(p) for p in packages], sorted(preload)]
    key = hashlib.sha256(json.dumps(made).encode()).hexdigest()
    if key in _unbroken:
        return _unbroken[key]
    base = factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    saved = shared / f"unbroken-{key[:16]}.json"
    with open(shared / f"unbroken-{key[:16]}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | (fcntl.LOCK_NB if needed else 0))
        except BlockingIOError:
            return run_tests(_unmutated(factory, packages), needed, preload)
        if not saved.exists():
            verdicts = run_tests(_unmutated(factory, packages), tests, preload)
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
    factory: pytest.TempPathFactory,
    mutation: Mutation,
    siblings: Sequence[Mutation],
    preload: Sequence[str] = (),
) -> None:
    """Each named test passes unbroken, and fails at its named check with `mutation`.

    `siblings`: the controls of the same module, whose named tests the unbroken run holds.
    `preload`: the SDKs both runs' fork server imports first (a cloud's SDKS above, or none).
    The mutant runs first: meanwhile another worker may be making the unbroken run.
    """
    red = run_tests(mutant(factory.mktemp("control"), mutation), mutation.tests, preload)
    green = unbroken(factory, siblings, mutation.tests, preload)
    for test in mutation.tests:
        assert test in green, f"{test} was not in the unbroken run"
        assert green[test].outcome == "passed", (
            f"{test} does not pass on the unbroken code ({green[test].outcome}):\n"
            f"{green[test].message}"
        )
    assert_each_red_at_its_check(mutation, red)


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

"""How the plugin is switched on, where its log goes, and how it refuses admission."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from inner_runs import SEAL_LINE
from named_checks import broken

from cloudguard import exit_codes
from cloudguard.documents import reach_log
from cloudguard.guard import alarm, reach, seal
from cloudguard.guard.keeper import Keeper
from cloudguard.guard.seal_registry import load_registry

REACHING_MODULE = """
import socket

def test_reaches():
    assert socket.cloudguard_test_fence
    try:
        socket.getaddrinfo("login.microsoftonline.com", 443)
    except Exception:
        pass

def test_clean():
    pass
"""


def test_ini_setting_enables_it(fenced):
    fenced.makeini("[pytest]\ncloudguard = true\n")
    fenced.makepyfile(test_mod=REACHING_MODULE)
    result = fenced.runpytest_subprocess("-p", "no:cacheprovider")

    result.assert_outcomes(failed=1, passed=1)
    assert result.ret == exit_codes.REACH_REFUSED
    assert any(line.startswith(SEAL_LINE) for line in result.stderr.lines)


def test_log_option_keeps_attributed_records(fenced, tmp_path):
    log = tmp_path / "reach.jsonl"
    fenced.makepyfile(test_mod=REACHING_MODULE)
    result = fenced.runpytest_subprocess("--cloudguard", f"--cloudguard-log={log}")

    result.assert_outcomes(failed=1, passed=1)
    [record] = reach_log.read(str(log)).reaches
    assert record["via"] == "socket"
    assert record["target"] == "login.microsoftonline.com:443"
    assert record["test"] == "test_mod.py::test_reaches"


def test_a_clean_session_leaves_no_temporary_log(fenced, tmp_path, monkeypatch):
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    fenced.makepyfile(test_mod="def test_clean():\n    pass\n")
    result = fenced.runpytest_subprocess("--cloudguard")

    assert result.ret == exit_codes.CLEAN
    assert list(temp.iterdir()) == []  # neither the log nor the seal directory is left


def test_a_reach_at_collection_is_in_the_summary_and_the_exit_status(fenced):
    fenced.makepyfile(
        test_mod="""
import socket
try:
    socket.getaddrinfo("sts.amazonaws.com", 443)
except Exception:
    pass

def test_clean():
    pass
"""
    )
    result = fenced.runpytest_subprocess("--cloudguard")

    result.assert_outcomes(passed=1)
    assert result.ret == exit_codes.REACH_REFUSED
    assert "socket reached `sts.amazonaws.com:443` from test <none named>" in result.stdout.str()


def test_an_invalid_project_registry_refuses_admission(fenced):
    (fenced.path / "cloudguard.toml").write_text("[seal.names]\nAWS_KEY = 3\n")
    fenced.makepyfile(test_mod="def test_clean():\n    pass\n")
    result = fenced.runpytest_subprocess("--cloudguard")

    assert result.ret == exit_codes.REFUSED_ADMISSION
    assert "cloudguard: refused admission: registry" in result.stderr.str()


def test_the_project_registry_is_the_seal(fenced, monkeypatch):
    (fenced.path / "cloudguard.toml").write_text(
        '[seal.names]\nFM_TEST_SECRET_THING = "a project identity variable"\n'
    )
    monkeypatch.setenv("FM_TEST_SECRET_THING", "value-never-printed")
    fenced.makepyfile(
        test_mod="""
import os

def test_sealed():
    assert "FM_TEST_SECRET_THING" not in os.environ
"""
    )
    result = fenced.runpytest_subprocess("--cloudguard")

    result.assert_outcomes(passed=1)
    [line] = [line for line in result.stderr.lines if line.startswith(SEAL_LINE)]
    assert "FM_TEST_SECRET_THING" in line and "value-never-printed" not in result.stderr.str()


def test_under_cloudguard_run_it_reuses_the_runs_seal_and_log(fenced):
    fenced.makepyfile(test_mod=REACHING_MODULE)
    log = fenced.path / "run.jsonl"
    result = fenced.run(
        sys.executable, "-m", "cloudguard", "run", "--log", str(log), "--",
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist",
        timeout=120,
    )  # fmt: skip

    # The runner sealed and printed the one seal line; the plugin, enabled by the seal
    # it found, attributed the reach to its test and the runner's check saw it too.
    assert [line for line in result.errlines if line.startswith(SEAL_LINE)] != []
    assert len([line for line in result.outlines + result.errlines if SEAL_LINE in line]) == 1
    assert (
        "cloudguard: this test reached a real cloud: socket -> login.microsoftonline.com:443"
        in (result.stdout.str())
    )
    assert result.ret == exit_codes.REACH_REFUSED
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["kind"] for r in records] == ["armed", "reach"]
    assert records[1]["test"] == "test_mod.py::test_reaches"


def test_xdist_workers_inherit_the_controllers_seal(fenced, monkeypatch):
    monkeypatch.setenv("AWS_PROFILE", "ambient-profile")  # in the shell: sealed
    fenced.makepyfile(
        test_mod="""
import os
import pytest

@pytest.mark.parametrize("n", range(4))
def test_worker_is_sealed(n):
    assert os.environ["PYTEST_XDIST_WORKER"]
    assert "AWS_PROFILE" not in os.environ
    assert os.environ["AWS_EC2_METADATA_DISABLED"] == "true"
    assert os.environ["CLOUDGUARD_TEST"].endswith(f"test_worker_is_sealed[{n}]")
"""
    )
    result = fenced.runpytest_subprocess("--cloudguard", "-n", "2")

    result.assert_outcomes(passed=4)
    assert len([line for line in result.errlines if line.startswith(SEAL_LINE)]) == 1


def test_an_in_process_session_leaves_the_outer_guards_as_they_were(pytester, monkeypatch):
    from cloudguard.guard import inprocess
    from cloudguard.guard.inprocess.refusal import binding
    from cloudguard.guard.seal import SEAL_DIR_VARIABLE

    for name in (reach.LOG_VARIABLE, SEAL_DIR_VARIABLE):
        monkeypatch.delenv(name, raising=False)
    before = (inprocess.installed(), binding.log, dict(os.environ))
    pytester.makepyfile(test_mod="def test_clean():\n    pass\n")
    result = pytester.runpytest_inprocess("--cloudguard", "-p", "no:xdist")

    result.assert_outcomes(passed=1)
    assert (inprocess.installed(), binding.log, dict(os.environ)) == before


SIBLING_MODULE = """
import os
from cloudguard.guard import reach

def test_a_sibling_of_the_outer_session_reaches_meanwhile():
    # What another worker of the outer session delivers to the outer keeper meanwhile.
    record = reach.reach_record(
        via="socket", argv=[], target="sts.amazonaws.com:443",
        environ={"CLOUDGUARD_TEST": "outer.py::test_sibling"},
    )
    assert reach.deliver(os.environ["CLOUDGUARD_KEEPER"], record) is None
"""


@contextlib.contextmanager
def _inside_an_outer_sessions_test(monkeypatch, log: Path) -> Iterator[None]:
    """Make this process look like a test of an outer sealed session: its seal, and its
    record keeper writing to `log` (instead of this suite's own)."""
    registry = load_registry()
    alarm.arm(str(log), by="outer session")
    outer_keeper = Keeper(str(log), log.stat().st_size)
    outer_seal = seal.create_seal(registry, log=str(log), keepers=[outer_keeper.address])
    # What a nested session really inherits: the outer session's sealed environment (an
    # inherited seal is verified, not assumed). The fence stays first on PYTHONPATH.
    env, dropped = seal.sealed_environment(
        os.environ, registry, outer_seal, str(log), [outer_keeper.address]
    )
    env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    for name in dropped:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv(reach.TEST_VARIABLE, "outer.py::test_runs_a_nested_pytest")
    try:
        yield
    finally:
        outer_keeper.close()
        outer_seal.remove()


def test_a_session_nested_in_another_sessions_test_judges_only_its_own_tests(
    fenced, monkeypatch, tmp_path
):
    log = tmp_path / "outer.jsonl"
    with _inside_an_outer_sessions_test(monkeypatch, log):
        fenced.makepyfile(test_sibling=SIBLING_MODULE)
        quiet = fenced.runpytest_subprocess("-p", "no:cacheprovider", "test_sibling.py")
        fenced.makepyfile(test_mod=REACHING_MODULE)
        red = fenced.runpytest_subprocess("-p", "no:cacheprovider", "test_mod.py")

    # The sibling's record is the outer session's to judge, not the nested one's...
    assert quiet.ret == exit_codes.CLEAN, broken(
        "a-nested-session-judges-only-its-own-tests", quiet.stdout.str()
    )
    assert [r["test"] for r in reach_log.read(str(log)).reaches][:1] == ["outer.py::test_sibling"]
    # ...while a reach by the nested session's own test still fails it (the control).
    red.assert_outcomes(failed=1, passed=1)
    assert red.ret == exit_codes.REACH_REFUSED
    assert "sts.amazonaws.com" not in red.stdout.str()


def test_a_nested_xdist_controller_judges_the_tests_its_workers_ran(fenced, monkeypatch, tmp_path):
    # The controller runs no test itself: its own tests are those its workers report.
    log = tmp_path / "outer.jsonl"
    with _inside_an_outer_sessions_test(monkeypatch, log):
        fenced.makepyfile(test_sibling=SIBLING_MODULE)
        quiet = fenced.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "test_sibling.py")
        fenced.makepyfile(test_mod=REACHING_MODULE)
        red = fenced.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "test_mod.py")

    assert quiet.ret == exit_codes.CLEAN, quiet.stdout.str()
    red.assert_outcomes(failed=1, passed=1)
    # The session verdict, not only the worker's failed test: 98 and the summary names it.
    assert red.ret == exit_codes.REACH_REFUSED, broken(
        "the-controller-judges-its-workers-tests", red.stdout.str()
    )
    assert "cloud reach(es) refused and recorded" in red.stdout.str()
    assert "sts.amazonaws.com" not in red.stdout.str()


# -- never off unsaid (issue 36, item 1) ---------------------------------------------------

ON_AND_REQUIRED = "[pytest]\ncloudguard = true\nrequired_plugins = cloudguard-ci\n"
OVERRIDDEN = {
    # (pytest.ini, where the override is given, what the stop names)
    "on the command line": (ON_AND_REQUIRED, "cmdline", "the command line"),
    "in PYTEST_ADDOPTS": (ON_AND_REQUIRED, "env", "PYTEST_ADDOPTS"),
    "only cloudguard = true": ("[pytest]\ncloudguard = true\n", "env", "PYTEST_ADDOPTS"),
    "only required_plugins": (
        "[pytest]\nrequired_plugins = cloudguard-ci\n",
        "env",
        "PYTEST_ADDOPTS",
    ),
}


@pytest.mark.parametrize("case", OVERRIDDEN.values(), ids=OVERRIDDEN.keys())
def test_an_override_cannot_turn_off_a_plugin_the_project_requires(fenced, monkeypatch, case):
    ini, where_given, source = case
    fenced.makefile(".ini", pytest=ini)
    fenced.makepyfile(test_mod=REACHING_MODULE)
    args = ["-p", "no:cacheprovider"]
    if where_given == "env":
        monkeypatch.setenv("PYTEST_ADDOPTS", "-o cloudguard=false")
    else:
        args += ["-o", "cloudguard=false"]
    result = fenced.runpytest_subprocess(*args)

    said = result.stderr.str()
    stopped = f"cloudguard: {source} turns the plugin off (-o cloudguard=false), but pytest.ini"
    assert (result.ret, stopped in said) == (pytest.ExitCode.USAGE_ERROR, True), broken(
        "an-override-cannot-turn-a-required-plugin-off", f"exit {result.ret}\n{said}"
    )
    assert "passed" not in result.stdout.str() and "failed" not in result.stdout.str()


OFF_BY_THE_FILE = {
    "cloudguard = false": ("[pytest]\ncloudguard = false\n", "pytest.ini says cloudguard = false"),
    "required, not enabled": (
        "[pytest]\nrequired_plugins = cloudguard-ci\n",
        "pytest.ini names cloudguard-ci but does not set cloudguard = true",
    ),
}


@pytest.mark.parametrize("case", OFF_BY_THE_FILE.values(), ids=OFF_BY_THE_FILE.keys())
def test_off_by_the_projects_own_file_is_said_in_one_line(fenced, case):
    ini, reason = case
    fenced.makefile(".ini", pytest=ini)
    fenced.makepyfile(test_mod=REACHING_MODULE)
    result = fenced.runpytest_subprocess("-p", "no:cacheprovider")

    result.assert_outcomes(passed=2)  # unguarded, as the project's own file says
    line = f"cloudguard: off: {reason}: this session's tests run unguarded"
    said = [text for text in result.errlines if text.startswith("cloudguard:")]
    assert said == [line], broken("off-is-said", "\n".join(result.errlines))


def test_a_project_that_names_no_plugin_hears_nothing_of_it(fenced):
    # The control of the lines above: the plugin installed in an environment whose project
    # never asked for it says nothing (the same session with the file's word says "off").
    fenced.makefile(".ini", pytest="[pytest]\n")
    fenced.makepyfile(test_mod="def test_clean():\n    pass\n")
    result = fenced.runpytest_subprocess("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    assert [text for text in result.errlines if "cloudguard" in text] == []


def test_a_blocked_plugin_the_project_names_is_said_in_one_line(fenced):
    # `-p no:cloudguard` blocks the plugin before it is imported: its sibling entry point
    # (cloudguard-switch) says so. Where required_plugins names it, pytest stops first.
    fenced.makefile(".ini", pytest="[pytest]\ncloudguard = true\n")
    fenced.makepyfile(test_mod="def test_clean():\n    pass\n")
    result = fenced.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:cloudguard")

    result.assert_outcomes(passed=1)
    line = (
        "cloudguard: off: -p no:cloudguard blocks the plugin pytest.ini names: "
        "this session's tests run unguarded"
    )
    said = [text for text in result.errlines if text.startswith("cloudguard:")]
    assert said == [line], broken("a-blocked-plugin-is-said", "\n".join(result.errlines))


def test_a_blocked_plugin_the_project_requires_stops_the_session(fenced):
    # cloudguard-switch is of the required distribution: loaded, pytest's own check would
    # count it, so it stops the session itself, as pytest did before it existed.
    fenced.makefile(
        ".ini", pytest="[pytest]\ncloudguard = true\nrequired_plugins = cloudguard-ci\n"
    )
    fenced.makepyfile(test_mod="def test_clean():\n    pass\n")
    result = fenced.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:cloudguard")

    said = result.stdout.str() + result.stderr.str()
    assert (result.ret, "Missing required plugins: cloudguard-ci" in said) == (
        pytest.ExitCode.USAGE_ERROR,
        True,
    ), broken("a-blocked-required-plugin-stops", said)

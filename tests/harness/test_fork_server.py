"""The negative controls' fork server runs the same inner pytest a fresh interpreter runs.

A control's run forked from the warm server (tests/cloudguard_forkserver.py) must see
what `python -m pytest` started afresh sees: the same sys.path (the mutant copy first),
argv, working directory, environment, interpreter flags, stdin and `__main__`, the
cloudguard plugin and package imported from the mutant copy, the same exit code and
output; a run past its time-out is killed and reported as before; a mutation that
does not bite still fails its control when the runs are forked; and an SDK a server
preloaded (`preload`) is guarded by the mutant's in-process guard, as it is on import.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import cloudguard_forkserver
import cloudguard_mutants
import pytest
from cloudguard_mutants import REPO, Mutation, assert_turns_red, copy_package
from named_checks import broken

PROBE = """
import json, os, sys


def test_probe():
    import cloudguard
    import cloudguard.guard.pytest.plugin as plugin

    state = {
        "path": sys.path, "argv": sys.argv, "cwd": os.getcwd(), "env": dict(os.environ),
        "flags": repr(sys.flags), "cloudguard": cloudguard.__file__, "plugin": plugin.__file__,
        "main": sorted(k for k in vars(sys.modules["__main__"]) if not k.startswith("__")),
        "stdin": [os.fstat(0).st_dev, os.fstat(0).st_ino],
        "rewritten": type(sys.modules["requests_mock"].__loader__).__name__,
    }
    with open(os.environ["PROBE_OUT"], "w") as out:
        json.dump(state, out)
    if os.environ.get("PROBE_FAILS"):
        raise AssertionError("the probe fails on purpose")
    if os.environ.get("PROBE_SLEEPS"):
        import time
        time.sleep(60)
"""
# Drawn afresh by each session's seal: the only values two runs may not share.
SESSION_RANDOM = re.compile(r"cloudguard-(seal|reach|keeper)-[^/:]*")


def _args(root: Path, probe: Path) -> list[str]:
    return ["-p", "no:cacheprovider", "-p", "no:xdist", "-q",
            "-p", "named_checks", f"--named-checks={root / 'named-checks.json'}",
            "--rootdir", str(REPO), "-c", str(REPO / "pyproject.toml"), str(probe)]  # fmt: skip


def _seen(out: Path) -> dict[str, object]:
    state = json.loads(out.read_text())
    state["env"] = {
        name: SESSION_RANDOM.sub("cloudguard-<session>", value)
        for name, value in state["env"].items()
        if name != "PROBE_OUT"
    }
    return state


@pytest.mark.parametrize("fails", [False, True], ids=["passing", "failing"])
def test_a_forked_run_sees_what_a_fresh_interpreter_sees(tmp_path: Path, fails: bool) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text(PROBE)
    root = copy_package(tmp_path / "mutant")
    env = cloudguard_mutants._own_session_env(root)
    if fails:
        env["PROBE_FAILS"] = "1"
    fresh_out, forked_out = tmp_path / "fresh.json", tmp_path / "forked.json"
    fresh = subprocess.run(
        [sys.executable, "-m", "pytest", *_args(root, probe)],
        cwd=root, env=dict(env, PROBE_OUT=str(fresh_out)),
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    before = cloudguard_forkserver.served
    forked = cloudguard_forkserver.run(
        _args(root, probe), cwd=root, env=dict(env, PROBE_OUT=str(forked_out)), timeout=120
    )
    assert cloudguard_forkserver.served == before + 1, "the run was not forked"

    seen, fresh_seen = _seen(forked_out), _seen(fresh_out)
    assert seen == fresh_seen
    path = seen["path"]
    assert isinstance(path, list) and path.index(str(root)) < path.index(str(REPO))
    assert str(seen["plugin"]).startswith(str(root)), "the cloudguard plugin is not the mutant's"
    assert seen["rewritten"] == "AssertionRewritingHook"
    assert forked.returncode == fresh.returncode == (1 if fails else 0)
    assert "the probe fails on purpose" in forked.stdout if fails else "1 passed" in forked.stdout
    verdicts = json.loads((root / "named-checks.json").read_text())
    assert [v["outcome"] for v in verdicts.values()] == ["failed" if fails else "passed"]


def test_a_forked_run_past_its_time_out_is_killed(tmp_path: Path) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text(PROBE)
    root = copy_package(tmp_path / "mutant")
    env = dict(cloudguard_mutants._own_session_env(root), PROBE_SLEEPS="1")
    started = time.monotonic()
    with pytest.raises(cloudguard_forkserver.TimedOut):
        cloudguard_forkserver.run(
            _args(root, probe), cwd=root, env=dict(env, PROBE_OUT=os.devnull), timeout=8
        )
    assert time.monotonic() - started < 30
    # ...and the server serves the next run.
    before = cloudguard_forkserver.served
    cloudguard_forkserver.run(
        _args(root, probe), cwd=root, env=dict(env, PROBE_SLEEPS="", PROBE_OUT=os.devnull),
        timeout=120,
    )  # fmt: skip
    assert cloudguard_forkserver.served == before + 1


NOT_BITING = Mutation(
    name="a chat's line rebuilt the same way (bites nothing)",
    module="notify/payloads.py",
    original='    parts = [f"{finding.verdict} {inert(finding.name, 80)} ({where})"]',
    broken='    parts = [f"{finding.verdict} {inert(finding.name, 80)} ({where})"]  # unchanged',
    tests=("tests/notify/test_notify.py::test_names_from_the_cloud_cannot_mention_link_or_format",),
    check="chat-urls-are-defanged",
)


def test_a_mutation_that_does_not_bite_fails_its_control_when_forked(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    before = cloudguard_forkserver.served
    with pytest.raises(AssertionError, match="stayed green with"):
        assert_turns_red(tmp_path_factory, NOT_BITING, [NOT_BITING])
    assert cloudguard_forkserver.served > before, "the control's runs were not forked"


SDK_PROBE = """
import json, os, sys

IMPORTED_BEFORE_THE_TESTS = "botocore.httpsession" in sys.modules


def test_probe():
    import botocore.httpsession

    send = botocore.httpsession.URLLib3Session.send
    state = {
        "preloaded": IMPORTED_BEFORE_THE_TESTS,
        "send": [send.__module__, sys.modules[send.__module__].__file__],
        "path": sys.path, "argv": sys.argv, "cwd": os.getcwd(),
    }
    with open(os.environ["PROBE_OUT"], "w") as out:
        json.dump(state, out)
"""


def test_a_run_forked_from_a_server_that_preloaded_an_sdk_has_it_guarded(tmp_path: Path) -> None:
    """An SDK the server imported (`preload`) is patched by the mutant's in-process guard at
    once, where a fresh run patches it on import: the same guard, from the mutant copy."""
    probe = tmp_path / "test_probe.py"
    probe.write_text(SDK_PROBE)
    root = copy_package(tmp_path / "mutant")
    env = cloudguard_mutants._own_session_env(root)
    fresh_out, forked_out = tmp_path / "fresh.json", tmp_path / "forked.json"
    subprocess.run(
        [sys.executable, "-m", "pytest", *_args(root, probe)],
        cwd=root, env=dict(env, PROBE_OUT=str(fresh_out)),
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    before = cloudguard_forkserver.served
    cloudguard_forkserver.run(
        _args(root, probe), cwd=root, env=dict(env, PROBE_OUT=str(forked_out)), timeout=120,
        preload=("botocore.httpsession",),
    )  # fmt: skip
    assert cloudguard_forkserver.served == before + 1, "the run was not forked"

    fresh, forked = json.loads(fresh_out.read_text()), json.loads(forked_out.read_text())
    assert (fresh.pop("preloaded"), forked.pop("preloaded")) == (False, True)
    module, where = forked["send"]
    assert module == "cloudguard.guard.inprocess.botocore_guard", broken(
        "an-sdk-imported-first-is-guarded", f"botocore's send is {module}'s, not the guard's"
    )
    assert where.startswith(str(root)), "the guard is not the mutant's"
    assert forked == fresh

"""gRPC under the guard: hermetic uses green, each unmocked twin red naming its reach.

grpcio's C-core opens its own sockets, which neither the socket guard nor the
test fence sees (`test_without_the_grpc_guard_the_twins_pass` is the control
that proves it: the socket guard alone lets every twin pass). So these inner
runs happen in a loopback-only network namespace (`unshare -rn`): with the
gRPC guard broken, a call fails at a DNS server it cannot reach, and no
packet leaves the machine.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterable, Mapping

import pytest
from inner_runs import INNER, InnerRun, _verdicts
from named_checks import broken

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
PUBSUB = "grpc reached `pubsub.googleapis.com`"
TWINS = {
    "test_twin_patched_stub": PUBSUB,
    "test_twin_loopback_server": PUBSUB,
    "test_twin_emulator_host": PUBSUB,
    "test_twin_aio_call": PUBSUB,
    "test_twin_channel_ready": "grpc reached `compute.googleapis.com`",
}
MOCKED = (
    "test_mocked_patched_stub",
    "test_mocked_loopback_server",
    "test_mocked_emulator_host",
    "test_mocked_aio_loopback_server",
)


def run_in_netns(pytester: pytest.Pytester, *args: str, suite: str = "grpc_calls") -> InnerRun:
    """An inner suite (the gRPC one unless named), run by pytest in a fresh network namespace
    with only loopback."""
    unshare = shutil.which("unshare", path=SYSTEM_PATH)
    ip = shutil.which("ip", path=SYSTEM_PATH)
    assert unshare and ip, "the gRPC proof needs unshare (util-linux) and ip (iproute2)"
    pytester.makepyfile(**{f"test_{suite}": (INNER / f"{suite}.py").read_text()})
    junit = pytester.path / "junit.xml"
    result = pytester.run(
        unshare, "-rn", "sh", "-c", f'{ip} link set lo up && exec "$@"', "sh",
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--junitxml={junit}",
        "-o", "junit_family=xunit1", *args, timeout=240,
    )  # fmt: skip
    return InnerRun(result, _verdicts(junit))


def green_and_red(run: InnerRun, green: Iterable[str], red: Mapping[str, str]) -> dict[str, str]:
    """What is wrong with `run`: a test of `green` that did not pass, a test of `red` that is
    not red naming its reach (`red[name]`)."""
    problems = {}
    for name in green:
        verdict = run.verdicts.get(name)
        if verdict is None or verdict.outcome != "passed":
            problems[f"mocked {name}"] = verdict.text[:600] if verdict else "did not run"
    for name, named in red.items():
        verdict = run.verdicts.get(name)
        if verdict is None or verdict.outcome != "failed" or named not in verdict.text:
            text = verdict.text[:400] if verdict else "did not run"
            problems[f"twin {name}"] = f"is not red naming {named}: {text}"
    return problems


def test_each_hermetic_grpc_use_is_green_and_each_twin_red(fenced):
    run = run_in_netns(fenced, "--cloudguard")

    problems = green_and_red(run, MOCKED, TWINS)
    assert not problems, broken(
        list(problems),
        "\n".join(f"{k}: {p}" for k, p in problems.items()) + "\n" + run.output[-2000:],
    )


def test_without_the_plugin_every_grpc_twin_passes(fenced):
    """The control: the twins are red because of cloudguard, not because they are broken."""
    run = run_in_netns(fenced, "-p", "no:cloudguard", "-k", "twin")

    assert {name: v.outcome for name, v in run.verdicts.items()} == dict.fromkeys(TWINS, "passed")

"""Run an inner suite with pytester and read each test's verdict from its JUnit XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

INNER = Path(__file__).with_name("inner")
SEAL_LINE = "CLOUDGUARD_AMBIENT_SEAL dropped="


@dataclass(frozen=True)
class Verdict:
    outcome: str  # passed, failed, error, skipped (a failure plus a teardown error: "failed+error")
    text: str


@dataclass(frozen=True)
class InnerRun:
    result: pytest.RunResult
    verdicts: dict[str, Verdict]

    @property
    def output(self) -> str:
        return self.result.stdout.str() + "\n" + self.result.stderr.str()

    def seal_lines(self) -> list[str]:
        return [line for line in self.output.splitlines() if line.startswith(SEAL_LINE)]


def run_inner(
    pytester: pytest.Pytester,
    suite: str,
    *args: str,
    conftest: str | None = None,
    early: str | None = None,
    timeout: float = 240,
) -> InnerRun:
    """`early`: source of a plugin loaded with `-p`, before the seal and the conftest files."""
    pytester.makepyfile(**{f"test_{suite}": (INNER / f"{suite}.py").read_text()})
    if conftest is not None:
        pytester.makeconftest(conftest)
    if early is not None:
        pytester.makepyfile(cloudguard_early_control=early)
        args = ("-p", "cloudguard_early_control", *args)
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", f"--junitxml={junit}", "-o", "junit_family=xunit1",
        *args, timeout=timeout,
    )  # fmt: skip
    return InnerRun(result, _verdicts(junit))


def _verdicts(junit: Path) -> dict[str, Verdict]:
    verdicts: dict[str, Verdict] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        outcomes = []
        texts = []
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcomes.append({"failure": "failed"}.get(child.tag, child.tag))
                texts.append((child.get("message") or "") + "\n" + (child.text or ""))
        verdicts[case.get("name", "")] = Verdict("+".join(outcomes) or "passed", "\n".join(texts))
    return verdicts


# The proof: each channel's reaching test fails naming its reach; the clean test after passes.
REACHING = {
    "test_boto3_swallowed": "botocore reached `s3.amazonaws.com`",
    "test_azure_swallowed": "azure-core reached `management.azure.com`",
    "test_socket_swallowed": "socket reached `169.254.169.254:80`",
    "test_az_subprocess": "az-shim reached `az account show`",
    "test_python_child_boto3": "botocore reached `sts.",
}
CLEAN = (
    "test_clean_after_boto3",
    "test_clean_after_azure",
    "test_clean_after_socket",
    "test_clean_after_az",
    "test_clean_after_python_child",
)


def proof_problems(run: InnerRun, reaching: dict[str, str] = REACHING) -> dict[str, str]:
    """Every way the run falls short of the proof, by the check it breaks; {} when it holds.

    The checks (tests/named_checks.py): "NAME is red naming its reach" for each reaching
    inner test, "NAME stays green" for each clean one.
    """
    problems = {}
    for name, named in reaching.items():
        verdict = run.verdicts.get(name)
        if verdict is None:
            problem = "did not run"
        elif verdict.outcome != "failed":
            problem = f"{verdict.outcome}, expected to fail naming {named}"
        elif named not in verdict.text or f"from test test_reaches.py::{name} " not in verdict.text:
            problem = f"failed without naming {named}: {verdict.text[:400]}"
        else:
            continue
        problems[f"{name} is red naming its reach"] = problem
    for name in CLEAN:
        if name in run.verdicts and run.verdicts[name].outcome != "passed":
            outcome = run.verdicts[name].outcome
            problems[f"{name} stays green"] = f"{outcome}: a reach leaked into it"
    return problems

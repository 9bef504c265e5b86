"""Named checks: a test names the promise each of its checks proves, so a control can name it.

    assert sent == 1, broken("sent-once", f"POST sent {sent} times for one action")

An assertion's message is evaluated only when the assertion fails, so
`broken` runs exactly when its check fails. It returns the message with a
marker no other failure carries: the check's name and a token drawn at random
for this one failure, kept in this process. A test that formats its own
message still uses it (`pytest.fail(broken(...))`, `raise AssertionError(...)`),
and a check that something is refused names itself with `raises_at`:

    with raises_at("a-newer-store-refused", HistoryTooNew, "a v99 store was opened"):
        open_store(location)

The negative controls' harness (tests/cloudguard_mutants.py) loads this module
as a plugin of the test run it starts (`-p named_checks --named-checks=FILE`).
After each test the plugin writes whether it passed and which named checks
the exception that ended it carries, token and all. So a control accepts a
test as red for its reason only when that very check failed: not a literal of
the test's source (pytest echoes it), not the program's output the test
quotes (neither can know the token), not an assertion that was caught and
replaced by another failure.
"""

from __future__ import annotations

import contextlib
import json
import secrets
from collections.abc import Generator, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TypeVar

import pytest

E = TypeVar("E", bound=BaseException)

# The checks that failed in the running test, by the token each failure drew.
_failed: dict[str, tuple[str, ...]] = {}


def broken(check: str | Iterable[str], detail: str) -> str:
    """The failure message of `check` (or of several checks at once): `detail`, then a marker."""
    checks = (check,) if isinstance(check, str) else tuple(check)
    token = secrets.token_hex(8)
    _failed[token] = checks
    return f"{detail}\n[broken: {', '.join(checks)} #{token}]"


@contextlib.contextmanager
def raises_at(
    check: str, expected: type[E], detail: str, *, match: str | None = None
) -> Iterator[pytest.ExceptionInfo[E]]:
    """`pytest.raises(expected, match=match)` whose "did not raise" is the failure of `check`
    (a raise of another type, or a message that does not match, fails at no named check)."""
    with pytest.raises(expected, match=match) as raised:
        yield raised
        pytest.fail(broken(check, f"DID NOT RAISE {expected.__name__}: {detail}"))


def failed_checks(message: str) -> list[str]:
    """The checks whose failure this message carries, by their tokens (this process's only)."""
    return [c for token, checks in _failed.items() if f"#{token}]" in message for c in checks]


# -- the plugin half: loaded only by the harness's runs ------------------------------------------


@dataclass
class Verdict:
    outcome: str = "passed"  # the worst of the test's phases: passed, skipped, failed
    checks: list[str] = field(default_factory=list)  # the named checks its failure carries
    message: str = ""  # what ended each failed phase, for the harness's own message


_verdicts: dict[str, Verdict] = {}
_WORSE = {"passed": 0, "skipped": 1, "failed": 2}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--named-checks",
        metavar="FILE",
        help="Write each test's outcome and the named checks its failure carries (JSON).",
    )


def pytest_runtest_logstart(nodeid: str) -> None:
    _failed.clear()
    _verdicts[nodeid] = Verdict()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    verdict = _verdicts.setdefault(item.nodeid, Verdict())
    if call.excinfo is not None and report.outcome == "failed":
        message = str(call.excinfo.value)
        verdict.checks += [c for c in failed_checks(message) if c not in verdict.checks]
        verdict.message += f"{call.when}: {message[:4000]}\n"
    return report


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """The outcome as reported, after every plugin's say: cloudguard's own plugin (an outer
    wrapper of makereport) fails a test that reached a cloud, with no exception of its own."""
    verdict = _verdicts.setdefault(report.nodeid, Verdict())
    if _WORSE[report.outcome] > _WORSE[verdict.outcome]:
        verdict.outcome = report.outcome
    if report.failed and f"{report.when}: " not in verdict.message:
        verdict.message += f"{report.when}: {report.longreprtext[-4000:]}\n"


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption("--named-checks")
    if path:
        Path(path).write_text(json.dumps({k: asdict(v) for k, v in _verdicts.items()}, indent=1))

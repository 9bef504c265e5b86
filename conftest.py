"""Shared by every test directory (tests/, adapters/*/tests/).

Every document the code under test writes in-process is validated against the
JSON Schema cloudguard ships for it (cloudguard/schemas/): the audit report,
the reap plan, each reap-log line and each reach-log line. A test that makes
cloudguard write a document its schema refuses fails there, naming the field.
Files written by child processes are checked by the tests that read them
(tests/cloudguard_schemas.py).

Every test has a state directory of its own (`XDG_STATE_HOME`, inherited by
the commands it runs): what one test trusts (tests/trusted_config.py) or
remembers (the history) is nobody else's, and the user's own is never read or
written.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from cloudguard_schemas import validate

# The second user's fixture (`second_user`), for tests of what another user's file may not do.
pytest_plugins = ["second_uid"]


def _checked(name: str, render: Callable[..., str]) -> Callable[..., str]:
    def rendered(*args: Any, **kwargs: Any) -> str:
        text = render(*args, **kwargs)
        validate(name, json.loads(text))
        return text

    return rendered


@pytest.fixture(autouse=True)
def _own_price_cache(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's own price cache: an audit never reads the user's ~/.cache/cloudguard."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.fixture(autouse=True)
def _outputs_match_their_schemas(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from cloudguard.audit.formats import json_report
    from cloudguard.documents import plan, reap_log
    from cloudguard.guard import reach

    # The JSON report is streamed (render collects write): check what write wrote.
    json_write = json_report.JsonFormat.write

    def json_written(self: Any, report: Any, out: Any, *, color: bool = False) -> None:
        buffer = io.StringIO()
        json_write(self, report, buffer, color=color)
        validate("audit-report", json.loads(buffer.getvalue()))
        out.write(buffer.getvalue())

    monkeypatch.setattr(json_report.JsonFormat, "write", json_written)
    monkeypatch.setattr(plan, "render_plan", _checked("reap-plan", plan.render_plan))

    write = reap_log.ReapLog.write

    def logged(self: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return validate("reap-log", write(self, *args, **kwargs))

    monkeypatch.setattr(reap_log.ReapLog, "write", logged)

    line = reach.record_line

    def reach_line(record: Any) -> bytes:
        return validate_bytes(line(record))

    def validate_bytes(data: bytes) -> bytes:
        validate("reach-log", json.loads(data))
        return data

    monkeypatch.setattr(reach, "record_line", reach_line)
    yield


@pytest.fixture(autouse=True)
def _a_state_directory_of_its_own(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The trust store and the history (`cloudguard audit` and `reap apply` remember each run)
    # live in the user's state directory: each test gets its own, so neither another test's
    # runs or trust nor the developer's own change what a report says.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The negative controls first (modules `*_controls.py`, `*_mutants.py`): each runs a
    suite of its own, seconds to a minute, so xdist's workers start on them while the many
    short tests are left to even out the end of the run."""
    items.sort(key=lambda item: not item.path.stem.endswith(("_controls", "_mutants")))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The session's own reach log (armed by the cloudguard plugin, written by every
    sealed child of every test) matches the reach-log schema, line by line."""
    import os

    from cloudguard_schemas import validate_lines

    path = os.environ.get("CLOUDGUARD_REACH_LOG")
    if not path or not os.path.isfile(path):
        return
    try:
        validate_lines("reach-log", path)
    except (AssertionError, ValueError) as error:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        terminal = session.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            terminal.write_line(f"reach log {path} does not match its schema: {error}", red=True)

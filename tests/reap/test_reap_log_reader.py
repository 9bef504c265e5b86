"""The reap log read back by its own strict reader (cloudguard.documents.reap_log)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cloudguard.documents.reap_log import ReapLog, ReapLogFormatError, read_reap_log


def _written(path: Path) -> list[dict[str, object]]:
    log = ReapLog(path)
    log.start(mode="dry-run", plan="plan.json", items=0)
    log.write("end", exit_code=0, counts={})
    log.close()
    return read_reap_log(path)


def test_a_log_reads_back_as_written_run_after_run(tmp_path: Path) -> None:
    path = tmp_path / "reap.jsonl"
    first = _written(path)
    both = _written(path)
    assert [r["event"] for r in first] == ["start", "end"]
    assert [r["event"] for r in both] == ["start", "end", "start", "end"]
    assert both[0]["run"] != both[2]["run"]  # each run carries its own id


@pytest.mark.parametrize(
    ("appended", "message"),
    [
        (b'{"event": "intent", "id": "/subscriptions/x/resourceGr', "line 3: torn or not JSON"),
        (b'{"event": "end"}', "line 3: not a record with event, at and run"),
        (
            json.dumps({"event": "done", "at": "now", "run": "someone-else"}).encode(),
            "line 3: a record of a run that never started",
        ),
        (
            json.dumps(
                {"event": "start", "at": "now", "run": "r", "schema": "x", "schema_version": 1}
            ).encode(),
            "line 3: not a cloudguard.reap.log v1 run",
        ),
    ],
    ids=["torn", "no-run", "foreign-run", "another-schema"],
)
def test_a_line_that_is_not_a_record_of_a_started_run_is_named(
    tmp_path: Path, appended: bytes, message: str
) -> None:
    path = tmp_path / "reap.jsonl"
    _written(path)
    with path.open("ab") as out:
        out.write(appended + b"\n")
    with pytest.raises(ReapLogFormatError, match=message):
        read_reap_log(path)

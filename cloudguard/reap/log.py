"""The reap log: JSON Lines, schema `cloudguard.reap.log` version 1 (docs/reap.md).

Record, then act: an `intent` line is on disk (flushed and fsynced) before an
action is sent, and `done` or `failed` after it, so a crash mid-action leaves
an intent with no outcome — evidence that something may have happened.
Each run appends a `start` line (with the schema) and ends with an `end`
line; every line carries the run's id, so runs appended to one file stay
apart. Each line is also printed, one escaped line per event.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from cloudguard.audit.formats.text import one_line
from cloudguard.reap.model import PlanItem
from cloudguard.schemas import schema_id

SCHEMA = "cloudguard.reap.log"
SCHEMA_VERSION = 1


class ReapLogError(Exception):
    """The log cannot be opened or written: nothing is done without a record."""


def default_log_path(now: datetime, directory: Path | None = None) -> Path:
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return (directory or Path.cwd()) / f"cloudguard-reap-{stamp}.jsonl"


class ReapLog:
    def __init__(self, path: Path, echo: Callable[[str], None] | None = None) -> None:
        self.path = path
        self.run = str(uuid.uuid4())
        self._echo = echo or (lambda line: None)
        try:
            self._file: TextIO = path.open("a", encoding="utf-8")
        except OSError as exc:
            raise ReapLogError(f"cannot open reap log {path}: {exc}") from exc

    def write(self, event: str, item: PlanItem | None = None, **fields: Any) -> dict[str, Any]:
        record: dict[str, Any] = {"event": event, "at": datetime.now(UTC).isoformat()}
        if item is not None:
            record.update(
                provider=item.provider,
                account=item.account,
                id=item.id,
                name=item.name,
                kind=item.kind,
                action=item.action,
            )
        record.update(fields)
        record["run"] = self.run
        try:
            self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError as exc:
            raise ReapLogError(f"cannot write reap log {self.path}: {exc}") from exc
        self._echo(describe(record))
        return record

    def start(self, **fields: Any) -> None:
        fields = {"$schema": schema_id("reap-log"), **fields}
        self.write("start", schema=SCHEMA, schema_version=SCHEMA_VERSION, **fields)

    def close(self) -> None:
        self._file.close()


def describe(record: dict[str, Any]) -> str:
    """One line for a person. Names and reasons come from the cloud: escaped."""
    event = record["event"]
    if "id" in record:
        what = (
            f"{record['action']} {record['provider']} {record['kind']} {one_line(record['name'])}"
        )
        detail = record.get("detail") or "; ".join(
            f"{s['code']}: {s['detail']}" for s in record.get("skips", ())
        )
        return f"{event:<10} {what}" + (f" — {one_line(detail, 300)}" if detail else "")
    if event == "start":
        return f"{event:<10} {record.get('mode')} of {one_line(record.get('plan'), 200)}"
    if event == "end":
        counts = ", ".join(f"{n} {k}" for k, n in record.get("counts", {}).items())
        return f"{event:<10} exit {record.get('exit_code')}" + (f" ({counts})" if counts else "")
    return f"{event:<10} {one_line(record.get('detail'), 300)}"

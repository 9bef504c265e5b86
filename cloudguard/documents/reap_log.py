"""The reap log document: JSON Lines, schema `cloudguard.reap.log` version 1 (docs/reap.md).

Record, then act: an `intent` line is on disk (flushed and fsynced) before an
action is sent, and `done` or `failed` after it, so a crash mid-action leaves
an intent with no outcome — evidence that something may have happened.
Each run appends a `start` line (with the schema) and ends with an `end`
line; every line carries the run's id, so runs appended to one file stay
apart. Each line is also printed, one escaped line per event.

The file is opened through `private_files` (never through a symlink, never
another user's, created 0600), and each line is appended as `reach.append`
does: one `write` under an exclusive `flock`, after a newline if the file
ends in a torn line (a run that died or hit a full disk mid-write), so a
torn line is never continued by the next record. Any failure to write is a
`ReapLogError`: the run stops there (75), and nothing is acted on after it.

Read back strictly (`read_reap_log`): every line a record of a run that
started with this schema's `start` line; a torn line is named, not skipped.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import stat
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cloudguard import json_input, private_files
from cloudguard.documents.strict_json import DocumentError
from cloudguard.escape import one_line
from cloudguard.schemas import schema_id

if TYPE_CHECKING:
    from cloudguard.documents.plan import PlanItem

SCHEMA = "cloudguard.reap.log"
SCHEMA_VERSION = 1


class ReapLogError(Exception):
    """The log cannot be opened or written: nothing is done without a record."""


def default_log_directory() -> Path:
    """`$XDG_STATE_HOME/cloudguard/reap-logs` (else `~/.local/state/...`): the user's own
    state, not the checkout a reap was started in (where a log is one more untracked file),
    made 0700 and refused when it is not the user's or others may write it."""
    state = os.environ.get("XDG_STATE_HOME", "")
    base = Path(state) if os.path.isabs(state) else Path.home() / ".local" / "state"
    directory = base / "cloudguard" / "reap-logs"
    try:
        directory.mkdir(parents=True, mode=0o700, exist_ok=True)
        status = os.lstat(directory)
    except OSError as exc:
        raise ReapLogError(f"cannot make the reap log directory {directory}: {exc}") from exc
    if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.geteuid() or status.st_mode & 0o022:
        raise ReapLogError(
            f"reap log directory {directory} is not a directory of this user's only: give --log"
        )
    return directory


def default_log_path(now: datetime, directory: Path | None = None) -> Path:
    """A fresh name nobody could have guessed and planted a file or link under."""
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    where = directory or default_log_directory()
    return where / f"cloudguard-reap-{stamp}-{secrets.token_hex(6)}.jsonl"


class ReapLog:
    def __init__(
        self, path: Path, echo: Callable[[str], None] | None = None, *, new: bool = False
    ) -> None:
        """Open `path` to append; `new`: it must not exist yet (a default, unguessable name)."""
        self.path = path
        self.run = str(uuid.uuid4())
        self._echo = echo or (lambda line: None)
        # What this run wrote about its items, as written (the history keeps each outcome).
        self.item_records: list[dict[str, Any]] = []
        try:
            try:
                os.close(private_files.create_new(path))
            except private_files.UnsafePathError:
                if new:
                    raise
            # Read-write, to see whether the file ends in a torn line; append-only writes.
            self._fd = private_files.open_own(path, os.O_RDWR | os.O_APPEND)
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
            if item.dependent_of:
                record["dependent_of"] = item.dependent_of
        record.update(fields)
        record["run"] = self.run
        try:
            self._append((json.dumps(record, ensure_ascii=False) + "\n").encode())
        except OSError as exc:
            raise ReapLogError(f"cannot write reap log {self.path}: {exc}") from exc
        self._echo(describe(record))
        if item is not None:
            self.item_records.append(record)
        return record

    def _append(self, line: bytes) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            end = os.fstat(self._fd).st_size
            if end and os.pread(self._fd, 1, end - 1) != b"\n":
                line = b"\n" + line  # a write died mid-line: keep this record whole
            written = os.write(self._fd, line)
            if written != len(line):
                raise OSError(f"short write ({written} of {len(line)} bytes)")
            # On disk before anything is acted on: an intent must survive a crash.
            os.fsync(self._fd)
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def start(self, **fields: Any) -> None:
        fields = {"$schema": schema_id("reap-log"), **fields}
        self.write("start", schema=SCHEMA, schema_version=SCHEMA_VERSION, **fields)

    def close(self) -> None:
        os.close(self._fd)


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


class ReapLogFormatError(DocumentError):
    """A file that is not a reap log, or a line of one that is torn or malformed."""


_EVERY_LINE = ("event", "at", "run")


def read_reap_log(path: Path) -> list[dict[str, Any]]:
    """Every record of the log at `path`, in order, each checked: a JSON object carrying
    `event`, `at` and `run`, of a run whose `start` line names this schema and version."""
    source = str(path)
    try:
        lines = path.read_bytes().decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ReapLogFormatError(source, f"cannot read the reap log: {exc}") from exc
    records: list[dict[str, Any]] = []
    started: set[str] = set()
    for number, line in enumerate(lines, start=1):
        where = f"line {number}"
        try:
            record = json_input.loads(line)
        except json.JSONDecodeError:
            raise ReapLogFormatError(source, f"{where}: torn or not JSON") from None
        if not isinstance(record, dict) or not all(
            isinstance(record.get(key), str) for key in _EVERY_LINE
        ):
            raise ReapLogFormatError(source, f"{where}: not a record with event, at and run")
        if record["event"] == "start":
            if (record.get("schema"), record.get("schema_version")) != (SCHEMA, SCHEMA_VERSION):
                raise ReapLogFormatError(source, f"{where}: not a {SCHEMA} v{SCHEMA_VERSION} run")
            started.add(record["run"])
        elif record["run"] not in started:
            raise ReapLogFormatError(source, f"{where}: a record of a run that never started")
        records.append(record)
    return records

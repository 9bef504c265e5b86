"""Controller records as evidence: which task ids the fleet's controller knows.

Two forms, either or both: a controller home directory (`--controller-home`)
or an exported JSON file (`--controller-records`, `-` for stdin). A task id
the controller has any record of explains its VM; one it has none of makes
the VM an orphan (or pending, while young).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from cloudguard.audit.evidence.interface import (
    EvidenceError,
    EvidenceRequest,
    EvidenceSource,
    Factory,
    Facts,
    NotSupplied,
    Question,
)
from cloudguard.cloud.options import EVIDENCE_PANEL, Shown, declare, string

HOME = declare(
    "controller_home",
    parse=string,
    default=None,
    metavar="DIR",
    help="Controller home: state/<task>.meta, queue/<task>.json, workers/*.json.",
    apply=Shown("Controller home, re-read before each item.", "DIR"),
    path=True,
    panel=EVIDENCE_PANEL,
    locates=True,
)
RECORDS = declare(
    "controller_records",
    parse=string,
    default=None,
    metavar="FILE|-",
    help='Exported controller state {"tasks": [...], "workers": [...]}.',
    apply=Shown("Exported controller state, re-read before each item.", "FILE"),
    path=True,
    panel=EVIDENCE_PANEL,
    locates=True,
)


def controller_home_tasks(home: str | Path) -> frozenset[str]:
    """Task ids with any record in a controller home.

    Layout: `state/<task>.meta`, `queue/<task>.json`, `workers/*.json` whose
    `task` field names a task. Directories are listed, never probed with a
    path built from a task id, so a hostile tag value cannot walk the disk.
    """
    root = Path(home)
    source = f"controller home {root}"
    if not root.is_dir():
        raise EvidenceError(source, "does not exist or is not a directory")
    layout = [root / "state", root / "queue", root / "workers"]
    if not any(d.is_dir() for d in layout):
        raise EvidenceError(source, "not a controller home: none of state/, queue/, workers/")
    tasks: set[str] = set()
    try:
        tasks.update(_stems(root / "state", ".meta"))
        tasks.update(_stems(root / "queue", ".json"))
        workers = root / "workers"
        if workers.is_dir():
            for path in sorted(workers.iterdir()):
                if path.suffix == ".json" and path.is_file():
                    tasks.update(_worker_task(path, source))
    except OSError as exc:
        raise EvidenceError(source, f"cannot read: {exc}") from exc
    return frozenset(tasks)


def _stems(directory: Path, suffix: str) -> Iterable[str]:
    if not directory.is_dir():
        return ()
    return [p.name[: -len(suffix)] for p in directory.iterdir() if p.name.endswith(suffix)]


def _worker_task(path: Path, source: str) -> list[str]:
    # A worker record we cannot parse might be the one that explains a VM:
    # failing closed beats reporting its VM as an orphan.
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvidenceError(source, f"unreadable worker record {path.name}: {exc}") from exc
    if not isinstance(record, dict):
        raise EvidenceError(source, f"worker record {path.name} is not a JSON object")
    task = record.get("task")
    if task is None:
        return []  # an idle worker
    if not isinstance(task, str):
        raise EvidenceError(source, f"worker record {path.name}: `task` is not a string")
    return [task]


def exported_controller_tasks(path: str, stdin: TextIO | None = None) -> frozenset[str]:
    """Task ids from `{"tasks": [...], "workers": [...]}` (a file, or `-` for stdin).

    A task is a string or an object with `id` (or `task`); a worker is an
    object whose `task` field names a task.
    """
    source = "controller records " + ("stdin" if path == "-" else path)
    try:
        text = (stdin or sys.stdin).read() if path == "-" else Path(path).read_text("utf-8")
        document = json.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvidenceError(source, f"cannot read: {exc}") from exc
    if not isinstance(document, dict) or not ({"tasks", "workers"} & document.keys()):
        raise EvidenceError(source, 'expected {"tasks": [...], "workers": [...]}')
    tasks: set[str] = set()
    for key in ("tasks", "workers"):
        entries = document.get(key, [])
        if not isinstance(entries, list):
            raise EvidenceError(source, f"`{key}` is not a list")
        for index, entry in enumerate(entries):
            task = _exported_task(entry, key)
            if task is _MALFORMED:
                raise EvidenceError(source, f"{key}[{index}] names no task")
            if isinstance(task, str):
                tasks.add(task)
    return frozenset(tasks)


_MALFORMED = object()


def _exported_task(entry: Any, key: str) -> object:
    if key == "tasks":
        if isinstance(entry, str):
            return entry
        if isinstance(entry, dict):
            value = entry.get("id", entry.get("task"))
            return value if isinstance(value, str) else _MALFORMED
        return _MALFORMED
    if not isinstance(entry, dict):
        return _MALFORMED
    value = entry.get("task")
    if value is None:
        return None  # an idle worker
    return value if isinstance(value, str) else _MALFORMED


@dataclass(frozen=True)
class ControllerRecords:
    home: str | None
    records: str | None  # a file, or "-" for stdin
    name: str = "controller-records"
    proves_ownership: bool = False

    @property
    def reads(self) -> str:
        read = []
        if self.home is not None:
            read.append(f"controller home {self.home}")
        if self.records is not None:
            read.append(f"controller records {self.records}")
        return "; ".join(read)

    def facts(self, question: Question) -> Facts:
        tasks: set[str] = set()
        if self.home is not None:
            tasks |= controller_home_tasks(self.home)
        if self.records is not None:
            tasks |= exported_controller_tasks(self.records)
        return Facts(controller_tasks=frozenset(tasks))


def _build(request: EvidenceRequest) -> EvidenceSource | NotSupplied:
    home, records = request.value(HOME), request.value(RECORDS)
    if home is None and records is None:
        return NotSupplied("no --controller-home or --controller-records")
    return ControllerRecords(home, records)


FACTORY = Factory(_build, options=(HOME, RECORDS))

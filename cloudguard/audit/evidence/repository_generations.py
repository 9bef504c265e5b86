"""Evidence sources: what the fleet knows, read once per audit.

The readers of the fleet's own layout, and `Evidence`, what classification
consults. Each source is wrapped as an `EvidenceSource` and registered in
`evidence_sources.SOURCES`; owned-id sources (Terraform state, a command, a
file) live in their own modules.

Three independent sources, each optional. A source that was not supplied is
"not checked" (its field in `Evidence` is None), never "passed". A source that
was supplied but could not be read raises `EvidenceError`, which the engine
turns into a `SourceFailure` (exit 75).

- controller records: a controller home directory or an exported JSON file;
- repository generations: every distinct generation checked by ONE git process;
- fixture ids: task ids that appear literally in the test corpus.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, TextIO


class EvidenceError(Exception):
    """A supplied evidence source could not be read."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.reason = reason


@dataclass(frozen=True)
class Evidence:
    """Everything classification may consult. None means "not checked"."""

    controller_tasks: frozenset[str] | None = None
    fixture_ids: frozenset[str] | None = None
    generations: Mapping[str, GenerationCheck] | None = None
    # (source name, cloud ids it owns, as `cloud_id_key` gives them), in the
    # order the sources are registered. Empty: no owned-ids source was read.
    owned_ids: tuple[tuple[str, frozenset[str]], ...] = ()
    # Owned-id sources supplied but unreadable: any of them might own a VM
    # that has no controller record, so none may be called an orphan.
    ownership_unread: tuple[str, ...] = ()

    def owner_of(self, cloud_id: str) -> str | None:
        """The first source that owns `cloud_id`, or None."""
        key = cloud_id_key(cloud_id)
        for source, ids in self.owned_ids:
            if key in ids:
                return source
        return None


def cloud_id_key(cloud_id: str) -> str:
    """A cloud id in the form owned-id sources and inventories are compared in.

    Path-shaped ids (`/subscriptions/.../virtualMachines/vm-1`, ARM's) are
    case-insensitive: `az` prints a resource group upper-cased where Terraform
    state keeps it as written. Other ids (`i-0abc...`, `vol-...`) are exact.
    """
    cloud_id = cloud_id.strip()
    return cloud_id.casefold() if cloud_id.startswith("/") else cloud_id


# --------------------------------------------------------------------------
# Controller records


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


# --------------------------------------------------------------------------
# Repository generations


class GenerationStatus(Enum):
    COMMIT = "commit"
    NOT_A_COMMIT = "not-a-commit"  # -> unknown-generation
    UNVERIFIABLE = "unverifiable"  # absent, but the clone is shallow or partial


@dataclass(frozen=True)
class GenerationCheck:
    status: GenerationStatus
    detail: str


# Object names only: a generation is a commit id, never a ref or a revision
# expression (`HEAD~1`, `--output=...`), and never spans lines of the batch.
_OBJECT_NAME = re.compile(r"[0-9a-fA-F]{4,64}")


def _git_env() -> dict[str, str]:
    # Inherited GIT_DIR / GIT_WORK_TREE (e.g. when run from a git hook) would
    # silently point git at another repository. And a partial clone lazily
    # fetches missing objects from its promisor remote: forbid every transport
    # so a check never leaves the machine.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_ALLOW_PROTOCOL="", GIT_NO_LAZY_FETCH="1", GIT_TERMINAL_PROMPT="0")
    return env


def _git(repo: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = _git_env()
    # Stop discovery at the given directory: a plain folder inside some other
    # checkout is "not a git repository", not that checkout.
    env["GIT_CEILING_DIRECTORIES"] = str(repo.resolve().parent)
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        env=env,
        check=False,
    )


def check_generations(repo: str | Path, generations: Iterable[str]) -> dict[str, GenerationCheck]:
    """Classify each distinct generation with one `git cat-file --batch-check`."""
    root = Path(repo)
    source = f"repository {root}"
    if not root.is_dir():
        raise EvidenceError(source, "not a git repository: no such directory")
    try:
        probe = _git(root, "rev-parse", "--is-shallow-repository")
    except OSError as exc:
        raise EvidenceError(source, f"cannot run git: {exc}") from exc
    if probe.returncode != 0:
        # git's own "fatal: ..." says little to someone who ran `cloudguard audit`.
        raise EvidenceError(
            source,
            "not a git repository: --repo takes a clone of the repository whose commits "
            "the generation tags name (git rev-parse found no repository there)",
        )
    incomplete = probe.stdout.strip() == "true"
    why_incomplete = "shallow clone" if incomplete else ""
    if not incomplete:
        partial = _git(
            root, "config", "--get-regexp", r"^(remote\..*\.promisor|extensions\.partialclone)$"
        )
        if partial.returncode == 0 and partial.stdout.strip():
            incomplete, why_incomplete = True, "partial clone"

    results: dict[str, GenerationCheck] = {}
    names: list[str] = []
    for generation in dict.fromkeys(generations):
        if _OBJECT_NAME.fullmatch(generation):
            names.append(generation)
        else:
            results[generation] = GenerationCheck(
                GenerationStatus.NOT_A_COMMIT, "not a hexadecimal commit id"
            )
    if not names:
        return results

    remaining = names
    while remaining:
        batch = _git(
            root,
            "cat-file",
            "--batch-check=%(objectname) %(objecttype)",
            stdin="".join(f"{name}\n" for name in remaining),
        )
        lines = batch.stdout.splitlines()
        if batch.returncode == 0 and len(lines) == len(remaining):
            for name, line in zip(remaining, lines, strict=True):
                results[name] = _verdict_of(line, incomplete, why_incomplete)
            break
        for name, line in zip(remaining, lines, strict=False):  # answered before it died
            results[name] = _verdict_of(line, incomplete, why_incomplete)
        remaining = _past_promised_object(remaining[len(lines) :], batch, results, source)
    return results


# A partial clone knows the ids of the objects its filter left out. Asked about
# one, cat-file tries to fetch it from the promisor remote, and with lazy
# fetching forbidden (as `_git_env` does) it dies instead of answering.
_PROMISOR_MISSING = re.compile(r"could not fetch ([0-9a-f]{40,64}) from promisor remote")


def _past_promised_object(
    unanswered: list[str],
    batch: subprocess.CompletedProcess[str],
    results: dict[str, GenerationCheck],
    source: str,
) -> list[str]:
    """After cat-file died on a promised-but-absent object: that generation is
    unverifiable (it may exist upstream; checking would mean a fetch) and the
    ones after it are asked again. A generation anyone can tag on a VM must not
    switch the check off for every other VM. Any other failure is one."""
    died = _PROMISOR_MISSING.search(batch.stderr)
    culprit = died and next((n for n in unanswered if died.group(1).startswith(n.lower())), None)
    if not culprit:
        raise EvidenceError(
            source, f"git cat-file failed (exit {batch.returncode}): {batch.stderr.strip()[:300]}"
        )
    results[culprit] = GenerationCheck(
        GenerationStatus.UNVERIFIABLE,
        "promised by the partial clone's remote but not here; not fetched",
    )
    return [n for n in unanswered if n != culprit]


def _verdict_of(line: str, incomplete: bool, why_incomplete: str) -> GenerationCheck:
    _, _, outcome = line.rpartition(" ")
    if outcome == "commit":
        return GenerationCheck(GenerationStatus.COMMIT, "commit")
    if outcome == "ambiguous":
        # A generation must name exactly one commit; a prefix shared by
        # several objects names none of them.
        return GenerationCheck(GenerationStatus.NOT_A_COMMIT, "ambiguous short hash")
    if outcome == "missing":
        if incomplete:
            return GenerationCheck(
                GenerationStatus.UNVERIFIABLE, f"not in this {why_incomplete}; may exist upstream"
            )
        return GenerationCheck(GenerationStatus.NOT_A_COMMIT, "no such commit")
    return GenerationCheck(GenerationStatus.NOT_A_COMMIT, f"names a {outcome}, not a commit")


# --------------------------------------------------------------------------
# Fixture ids

_SIMPLE_ID = re.compile(r"[A-Za-z0-9_-]+")
_SKIP_DIRS = frozenset({".git", "__pycache__", ".venv", "node_modules", ".mypy_cache", ".tox"})
_MAX_FILE_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class FixtureCorpus:
    """The test corpus, indexed for "does this id occur literally, as a whole word".

    Whole-word so that `cloud-noenv-c7` does not match inside `cloud-noenv-c77`.
    Ids made of [A-Za-z0-9_-] are looked up in a token set (constant time);
    any other id falls back to a bounded substring search.
    """

    tokens: frozenset[str]
    texts: tuple[str, ...]
    explicit: frozenset[str] = frozenset()

    def fixture_ids(self, task_ids: Iterable[str]) -> frozenset[str]:
        return frozenset(t for t in set(task_ids) if self.contains(t))

    def contains(self, task_id: str) -> bool:
        if task_id in self.explicit:
            return True
        if not task_id:
            return False
        if _SIMPLE_ID.fullmatch(task_id):
            return task_id in self.tokens
        return any(_occurs_as_word(text, task_id) for text in self.texts)


def _occurs_as_word(text: str, needle: str) -> bool:
    start = text.find(needle)
    while start != -1:
        before = text[start - 1] if start else " "
        end = start + len(needle)
        after = text[end] if end < len(text) else " "
        if not (_SIMPLE_ID.fullmatch(before) or _SIMPLE_ID.fullmatch(after)):
            return True
        start = text.find(needle, start + 1)
    return False


def load_fixture_corpus(
    paths: Sequence[str | Path], ids_files: Sequence[str | Path] = ()
) -> FixtureCorpus:
    texts: list[str] = []
    for path in map(Path, paths):
        if not path.exists():
            raise EvidenceError(f"fixture corpus {path}", "does not exist")
        for file in _corpus_files(path):
            try:
                data = file.read_bytes()
            except OSError as exc:
                raise EvidenceError(f"fixture corpus {path}", f"cannot read {file}: {exc}") from exc
            if b"\0" in data[:8192]:
                continue  # binary
            texts.append(data.decode("utf-8", errors="replace"))
    explicit: set[str] = set()
    for ids_file in map(Path, ids_files):
        try:
            lines = ids_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise EvidenceError(f"fixture ids {ids_file}", f"cannot read: {exc}") from exc
        explicit.update(s for line in lines if (s := line.strip()) and not s.startswith("#"))
    tokens = frozenset(t for text in texts for t in _SIMPLE_ID.findall(text))
    return FixtureCorpus(tokens=tokens, texts=tuple(texts), explicit=frozenset(explicit))


def _corpus_files(path: Path) -> Iterable[Path]:
    if path.is_file():
        yield path
        return
    for directory, subdirs, files in os.walk(path):
        subdirs[:] = sorted(d for d in subdirs if d not in _SKIP_DIRS)
        for name in sorted(files):
            file = Path(directory, name)
            try:
                if file.is_file() and file.stat().st_size <= _MAX_FILE_BYTES:
                    yield file
            except OSError:
                continue

"""Fixture ids as evidence: task ids that appear literally in the test corpus.

A VM whose task id is written in a test file (`cloud-noenv-c7`) was made by
a test, not by the controller: `fixture-task-id`, a suspect or an orphan.
The corpus is `--fixtures-from` (default: <repo>/tests when there is a
`--repo`) and files of known ids, `--fixture-ids`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cloudguard.audit.evidence import repository_generations
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

FIXTURES_FROM = declare(
    "fixtures_from",
    parse=string,
    default=(),
    metavar="PATH",
    help="Test corpus: a task id found in it literally is a fixture id "
    "(repeatable) (default: <repo>/tests).",
    apply=Shown("Test corpus (repeatable).", "PATH"),
    many=True,
    path=True,
    panel=EVIDENCE_PANEL,
    locates=True,
)
FIXTURE_IDS = declare(
    "fixture_ids",
    parse=string,
    default=(),
    metavar="FILE",
    help="File of known fixture ids, one a line (repeatable).",
    apply=Shown("Known fixture ids (repeatable).", "FILE"),
    many=True,
    path=True,
    panel=EVIDENCE_PANEL,
    locates=True,
)


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


@dataclass(frozen=True)
class FixtureIds:
    paths: tuple[str, ...]
    ids_files: tuple[str, ...]
    name: str = "fixture-ids"
    proves_ownership: bool = False

    @property
    def reads(self) -> str:
        return ", ".join([*self.paths, *self.ids_files])

    def facts(self, question: Question) -> Facts:
        corpus = load_fixture_corpus(self.paths, self.ids_files)
        return Facts(fixture_ids=corpus.fixture_ids(question.task_ids))


def _build(request: EvidenceRequest) -> EvidenceSource | NotSupplied:
    paths = list(request.value(FIXTURES_FROM))
    repo = request.value(repository_generations.REPO)
    if not paths and repo is not None:
        default = Path(repo) / "tests"
        if default.is_dir():
            paths.append(str(default))
    ids_files = tuple(request.value(FIXTURE_IDS))
    if not paths and not ids_files:
        return NotSupplied("no --fixtures-from, --fixture-ids or <repo>/tests")
    return FixtureIds(tuple(paths), ids_files)


FACTORY = Factory(_build, options=(FIXTURES_FROM, FIXTURE_IDS))

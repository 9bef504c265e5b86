"""Repository generations as evidence: is each VM's generation tag a commit of the repository?

Every distinct generation the fleet carries is checked by ONE git process
(`git cat-file --batch-check`), in a clone given by `--repo`. A generation
that is no commit there is `unknown-generation`; one a shallow or partial
clone cannot tell is `unverifiable-generation`. git never fetches: a check
never leaves the machine.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cloudguard.audit.evidence.interface import (
    EvidenceError,
    EvidenceRequest,
    EvidenceSource,
    Factory,
    Facts,
    GenerationCheck,
    GenerationStatus,
    NotSupplied,
    Question,
)
from cloudguard.cloud.options import EVIDENCE_PANEL, NeedsTrust, Shown, declare, string

REPO = declare(
    "repo",
    parse=string,
    default=None,
    metavar="PATH",
    help="Git repository whose commits generations must be.",
    apply=Shown("Git repository generations must be.", "PATH"),
    path=True,
    panel=EVIDENCE_PANEL,
    locates=True,
    # git reads the named repository's own config, which can name programs (core.fsmonitor,
    # gpg.program): a directory committed to look like a repository is one.
    trust=NeedsTrust("runs git in the repository it names, whose own config can run programs"),
)


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


@dataclass(frozen=True)
class RepositoryGenerations:
    repo: str
    name: str = "repository-generations"
    proves_ownership: bool = False

    @property
    def reads(self) -> str:
        return f"repository {self.repo}"

    def facts(self, question: Question) -> Facts:
        return Facts(generations=check_generations(self.repo, sorted(question.generations)))


def _build(request: EvidenceRequest) -> EvidenceSource | NotSupplied:
    repo = request.value(REPO)
    if repo is None:
        return NotSupplied("no --repo")
    return RepositoryGenerations(repo)


FACTORY = Factory(_build, options=(REPO,))

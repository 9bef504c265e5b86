"""Repository generations: one `git cat-file --batch-check` vs one `git cat-file` per generation.

Builds a repository with 10,000 commits (git fast-import, a second or two),
then checks 10,000 distinct generations (half real commits, half absent) both
ways in the same run, checks they agree, and reports the ratio. Prints a
markdown table and writes benchmarks/results/audit_git.json.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cloudguard.audit.evidence import repository_generations
from cloudguard.audit.evidence.interface import GenerationStatus
from cloudguard.audit.evidence.repository_generations import check_generations

COMMITS = 10_000
GENERATIONS = 10_000
RESULTS = Path(__file__).resolve().parent / "results" / "audit_git.json"


def build_repo(root: Path) -> list[str]:
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    stream = []
    for i in range(COMMITS):
        message = f"generation {i}\n".encode()
        stream.append(
            b"commit refs/heads/main\n"
            + f"committer bench <bench@example.invalid> {1_700_000_000 + i} +0000\n".encode()
            + f"data {len(message)}\n".encode()
            + message
        )
    subprocess.run(
        ["git", "-C", str(root), "fast-import", "--quiet"], input=b"".join(stream), check=True
    )
    listed = subprocess.run(
        ["git", "-C", str(root), "rev-list", "main"], capture_output=True, text=True, check=True
    )
    return listed.stdout.split()


def one_process_per_generation(root: Path, generations: list[str]) -> dict[str, bool]:
    """The baseline: what checking each VM's generation on its own costs."""
    found = {}
    for generation in generations:
        done = repository_generations._git(root, "cat-file", "-t", generation)
        found[generation] = done.returncode == 0 and done.stdout.strip() == "commit"
    return found


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        start = time.perf_counter()
        commits = build_repo(root)
        built = time.perf_counter() - start
        half = GENERATIONS // 2
        generations = commits[:half] + [f"{i:08x}" + "0" * 32 for i in range(GENERATIONS - half)]
        assert len(set(generations)) == GENERATIONS

        start = time.perf_counter()
        batched = check_generations(root, generations)
        one = time.perf_counter() - start

        start = time.perf_counter()
        separate = one_process_per_generation(root, generations)
        many = time.perf_counter() - start

    agree = all((batched[g].status is GenerationStatus.COMMIT) == separate[g] for g in generations)
    assert agree, "the two methods disagree"
    commits_found = sum(1 for g in generations if separate[g])
    print(
        f"{GENERATIONS:,} distinct generations ({commits_found:,} commits) in a repository of "
        f"{COMMITS:,} commits (built with fast-import in {built:.1f} s)\n"
    )
    print("| method | git processes | seconds | generations/s |")
    print("|---|---:|---:|---:|")
    print(f"| one `git cat-file --batch-check` | 1 | {one:.3f} | {GENERATIONS / one:,.0f} |")
    print(
        f"| one `git cat-file -t` per generation | {GENERATIONS:,} | {many:.2f} | "
        f"{GENERATIONS / many:,.0f} |"
    )
    print(f"\nratio: one process is {many / one:,.0f}x faster")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "audit_git",
                "generations": GENERATIONS,
                "commits_in_repo": COMMITS,
                "git": subprocess.run(
                    ["git", "--version"], capture_output=True, text=True
                ).stdout.strip(),
                "python": sys.version.split()[0],
                "machine": platform.machine(),
                "one_process_seconds": one,
                "per_generation_seconds": many,
                "ratio": many / one,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

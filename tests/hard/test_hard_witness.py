"""Under --hard a root kept read-only inside is never the command's finding (issue 31, item 5).

The command cannot write a read-only root (a write aimed at one is refused and recorded at
the attempt: tests/hard/test_hard_roots.py), so a change found there after the run was made
by another process: here a job of "the host's" writes the trust store while the command
runs. Under --hard it is no finding; the control, the same job during a soft run, is one
(the soft run cannot tell who wrote, and says so in docs/guard.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

from hard_helpers import hard_env, hard_run
from named_checks import broken

# The command execs into a process whose argv names it (made only after the witness looked),
# then waits for the host's job to say it wrote: a file in the working directory, which is
# bound for real (the trust store itself is under the home's overlay, whose cached lookup
# would not see the new file for as long as the waiter waits).
WAITER = """
import os, sys
wait = '''
import os, sys, time
deadline = time.monotonic() + 30
while not os.path.exists(sys.argv[1]) and time.monotonic() < deadline:
    time.sleep(0.05)
'''
os.execv(sys.executable, [sys.executable, "-c", wait, sys.argv[1], "WAITS-" + "FOR-TRUST"])
"""


def another_process_writes_the_trust_store(tmp_path: Path, *options: str) -> tuple[str, int]:
    env = hard_env(tmp_path)
    state = Path(env["HOME"]) / ".local" / "state" / "cloudguard"
    state.mkdir(parents=True)  # an existing root: a read-only view of it inside
    trusted = state / "trusted.json"
    where = tmp_path / "work"
    where.mkdir()
    wrote = where / "the-host-wrote"
    job = (
        "( for i in $(seq 600); do pgrep -f 'WAITS[-]FOR-TRUST' >/dev/null && break; "
        f"sleep 0.05; done; echo '{{}}' > '{trusted}'; touch '{wrote}' ) & S=$!;"
    )
    run = hard_run(
        tmp_path, sys.executable, "-c", WAITER, str(wrote),
        options=options, host_setup=job, env=env, cwd=where,
    )  # fmt: skip
    assert trusted.exists(), run.output
    return run.output, run.returncode


def test_a_root_read_only_inside_changed_by_another_process_is_no_finding(
    tmp_path: Path,
) -> None:
    output, code = another_process_writes_the_trust_store(tmp_path, "--hard")

    assert "ambient-write" not in output, broken(
        "a-root-read-only-inside-is-not-the-commands-finding",
        f"a write the command could not make was blamed on it:\n{output}",
    )
    assert code == 0, output


def test_control_the_same_write_during_a_soft_run_is_a_finding(tmp_path: Path) -> None:
    output, code = another_process_writes_the_trust_store(tmp_path)

    assert "ambient-write:" in output and "trusted.json created" in output, output
    assert code == 98, output

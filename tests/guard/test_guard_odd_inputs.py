"""Every odd input to `run`, `check` and `doctor`: one line, the right exit code (issue 25, item 5).

2 for a usage error (what was typed cannot mean anything), 97 for a log or
registry that cannot be admitted (the guard's contract), 75 for a report that
could never be written, 126/127 for a command that cannot start. Never a
traceback, never 1 (which no guard command means). A reader that closes the
pipe early is not an error: the command ends with its own verdict. A
relative `--log` is recorded once (before the record keeper a shim wrote to
the baked path and to the environment's, the same file twice) and is handed
on absolute, so a child in another directory finds it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from guard_helpers import cloudguard, minimal_env, reaches
from named_checks import broken

from cloudguard.guard import alarm, reach


@dataclass(frozen=True)
class Odd:
    args: tuple[str, ...]
    code: int
    says: str
    prepare: Callable[[Path], None] = lambda tmp: None
    env: dict[str, str] = field(default_factory=dict)
    ours: bool = True  # cloudguard's own message (one line); False: the option parser's


def armed_with_a_reach(tmp: Path) -> None:
    log = tmp / "reach.jsonl"
    alarm.arm(str(log), by="test")
    reach.append(str(log), reach.reach_record(via="az-shim", argv=["az", "login"], target="az"))


def file(name: str, content: str) -> Callable[[Path], None]:
    return lambda tmp: (tmp / name).write_text(content)


HEADER_END = "{tmp}/reach.jsonl"
ODD = {
    # -- run ---------------------------------------------------------------------------
    "run: no command": Odd(("run",), 2, "give the command to run after --", ours=False),
    "run: an unknown option before --": Odd(
        ("run", "--hrad", "--", "true"), 2, "no such option: --hrad (the command to run goes"
    ),
    "run: --forward without --hard": Odd(
        ("run", "--forward", "4566", "--", "true"), 2, "--forward needs --hard"
    ),
    "run: --forward 0": Odd(
        ("run", "--hard", "--forward", "0", "--", "true"), 2, "'--forward'", ours=False
    ),
    "run: an empty --log": Odd(
        ("run", "--log", "", "--", "true"), 2, "--log: an empty path names no file"
    ),
    "run: --log a directory": Odd(
        ("run", "--log", "{tmp}", "--", "true"), 97, "cannot arm the reach log"
    ),
    "run: --log a file that is no reach log": Odd(
        ("run", "--log", "{tmp}/notes.txt", "--", "true"),
        97,
        "cannot arm the reach log",
        prepare=file("notes.txt", "my notes\n"),
    ),
    "run: --log in a directory that does not exist": Odd(
        ("run", "--log", "{tmp}/missing/r.jsonl", "--", "true"),
        97,
        "cannot be created: No such file or directory",
    ),
    "run: --registry that does not exist": Odd(
        ("run", "--registry", "{tmp}/nope.toml", "--", "true"), 97, "nope.toml: does not exist"
    ),
    "run: --registry with an unknown key": Odd(
        ("run", "--registry", "{tmp}/c.toml", "--", "true"),
        97,
        "line 1: unknown key 'seel'",
        prepare=file("c.toml", '[seel.names]\nX = "y"\n'),
    ),
    "run: --registry that is no TOML": Odd(
        ("run", "--registry", "{tmp}/c.toml", "--", "true"),
        97,
        "refused admission: registry",
        prepare=file("c.toml", "[seal\n"),
    ),
    "run: --registry a directory": Odd(
        ("run", "--registry", "{tmp}", "--", "true"), 2, "is a directory", ours=False
    ),
    "run: --report without =FILE": Odd(
        ("run", "--report", "sarif", "--", "true"), 2, "--report: expected FORMAT=FILE"
    ),
    "run: --report an unknown format": Odd(
        ("run", "--report", "html=r.html", "--", "true"), 2, "FORMAT one of json|junit|"
    ),
    "run: two --report to one file": Odd(
        ("run", "--report", "json={tmp}/r", "--report", "sarif={tmp}/r", "--", "true"),
        2,
        "two reports would be written to",
    ),
    "run: --report in a directory that does not exist": Odd(
        ("run", "--report", "json={tmp}/no/r.json", "--", "true"), 75, "no is not a directory"
    ),
    "run: a command that does not exist": Odd(
        ("run", "--", "no-such-command-xyz"), 127, "command not found: no-such-command-xyz"
    ),
    "run: a command that is not executable": Odd(
        ("run", "--", "{tmp}/script.sh"),
        126,
        "command not executable",
        prepare=file("script.sh", "#!/bin/sh\n"),
    ),
    # -- check -------------------------------------------------------------------------
    "check: no log named": Odd(("check",), 2, "no reach log: pass --log PATH or set"),
    "check: an empty --log": Odd(("check", "--log", ""), 2, "--log: an empty path names no file"),
    "check: a log that does not exist": Odd(
        ("check", "--log", "{tmp}/nope.jsonl"), 97, "does not exist (deleted, or never armed)"
    ),
    "check: a directory": Odd(("check", "--log", "{tmp}"), 97, "is not a regular file"),
    "check: an empty file": Odd(
        ("check", "--log", "{tmp}/e.jsonl"),
        97,
        "is empty: it was never armed",
        prepare=file("e.jsonl", ""),
    ),
    "check: a file that is no reach log": Odd(
        ("check", "--log", "{tmp}/p.json"),
        97,
        "is not a cloudguard reach log",
        prepare=file("p.json", '{"name": "web"}\n'),
    ),
    "check: a torn log": Odd(
        ("check", "--log", "{tmp}/t.jsonl"),
        97,
        "line 2 is torn",
        prepare=file("t.jsonl", '{"schema":1,"kind":"armed","at":"x","by":"t","pid":1}\n{"sch'),
    ),
    "check: --since -1": Odd(
        ("check", "--log", HEADER_END, "--since", "-1"),
        2,
        "'--since'",
        armed_with_a_reach,
        ours=False,
    ),
    "check: --since not a number": Odd(
        ("check", "--log", HEADER_END, "--since", "abc"),
        2,
        "'--since'",
        armed_with_a_reach,
        ours=False,
    ),
    "check: --since inside a line": Odd(
        ("check", "--log", HEADER_END, "--since", "5"),
        2,
        "--since 5 is inside a line",
        armed_with_a_reach,
    ),
    "check: --since past the end": Odd(
        ("check", "--log", HEADER_END, "--since", "99999999999999999999"),
        97,
        "before the offset 99999999999999999999 to check from: it shrank",
        armed_with_a_reach,
    ),
    "check: --report without =FILE": Odd(
        ("check", "--log", HEADER_END, "--report", "junit"),
        2,
        "--report: expected FORMAT=FILE",
        armed_with_a_reach,
    ),
    # -- doctor ------------------------------------------------------------------------
    "doctor: --registry that does not exist": Odd(
        ("doctor", "--registry", "{tmp}/nope.toml"), 97, "nope.toml: does not exist"
    ),
    "doctor: --python that does not exist": Odd(
        ("doctor", "--python", "{tmp}/no-python"), 2, "'--python'", ours=False
    ),
    "doctor: --python that is no Python": Odd(
        ("doctor", "--python", "/bin/false"),
        97,
        "/bin/false could not tell how pytest would start (exit 1",
    ),
    "doctor: --registry with a malformed entry": Odd(
        ("doctor", "--registry", "{tmp}/c.toml"),
        97,
        "line 2: malformed entry '1X'",
        prepare=file("c.toml", '[seal.names]\n1X = "y"\n'),
    ),
}


@pytest.mark.parametrize("odd", ODD.values(), ids=ODD.keys())
def test_each_odd_input_gets_one_line_and_its_exit_code(tmp_path: Path, odd: Odd) -> None:
    odd.prepare(tmp_path)
    args = [arg.replace("{tmp}", str(tmp_path)) for arg in odd.args]

    done = cloudguard(*args, env=minimal_env(tmp_path, **odd.env), cwd=tmp_path)

    said = [line for line in done.stderr.splitlines() if line.strip()]
    assert "Traceback" not in done.stderr, done.stderr
    # The option parser's own box wraps at the terminal's width, wherever tmp_path ends.
    words = " ".join(done.stderr.replace("│", " ").split())
    assert (done.returncode, odd.says in words) == (odd.code, True), broken(
        "an-odd-input-gets-its-line-and-exit-code", f"exit {done.returncode}, said:\n{done.stderr}"
    )
    if odd.ours:
        # Besides the lines every run of the command prints (the seal, doctor's hard seal).
        usual = ("CLOUDGUARD_AMBIENT_SEAL", "cloudguard doctor: hard seal (run --hard)")
        told = [line for line in said if not line.startswith(usual)]
        assert len(told) == 1, f"more than one line:\n{done.stderr}"


def test_a_relative_log_is_recorded_once_and_handed_on_absolute(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    script = f"cd sub && az vm list; {sys.executable} -m cloudguard check; exit 0"

    done = cloudguard(
        "run", "--log", "rel.jsonl", "--", "sh", "-c", script,
        env=minimal_env(tmp_path), cwd=tmp_path,
    )  # fmt: skip

    assert done.returncode == 98, done.stderr
    assert len(reaches(tmp_path / "rel.jsonl")) == 1, "the reach was recorded more than once"
    # The check the command ran in sub/ found the run's log by its absolute path: the run's
    # own verdict and the inner check's each name it, once.
    named = f"1 cloud reach(es) refused and recorded in {tmp_path / 'rel.jsonl'}:"
    assert done.stderr.count(named) == 2, broken(
        "the-log-is-handed-on-absolute", f"the log was not handed on absolute:\n{done.stderr}"
    )


def closed_pipe() -> int:
    """A pipe's write end whose reader has already gone: every write to it is EPIPE."""
    read, write = os.pipe()
    os.close(read)
    return write


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("check", "--log", HEADER_END), 98),
        (("run", "--", "sh", "-c", "az login; touch ran"), 98),
        (("run", "--", "sh", "-c", "touch ran"), 0),
        (("doctor",), 97),
    ],
    ids=["check-red", "run-red", "run-clean", "doctor"],
)
def test_a_reader_that_closed_the_pipe_changes_no_exit_code(
    tmp_path: Path, args: tuple[str, ...], code: int
) -> None:
    armed_with_a_reach(tmp_path)
    command = [
        sys.executable,
        "-m",
        "cloudguard",
        *(a.replace("{tmp}", str(tmp_path)) for a in args),
    ]
    stderr = closed_pipe()
    try:
        done = subprocess.run(
            command,
            env=minimal_env(tmp_path), cwd=tmp_path, stdout=stderr, stderr=stderr,
            stdin=subprocess.DEVNULL, timeout=60, check=False,
        )  # fmt: skip
    finally:
        os.close(stderr)

    assert done.returncode == code, broken(
        "a-closed-pipe-changes-no-exit-code", f"exit {done.returncode}, not {code}"
    )
    if args[0] == "run":
        assert (tmp_path / "ran").exists(), "the command did not run once stderr was closed"


def test_control_the_closed_pipe_is_an_error_for_a_plain_writer(tmp_path: Path) -> None:
    # Without a reader that may leave, Python's own write to the closed pipe fails.
    stderr = closed_pipe()
    try:
        done = subprocess.run(
            [sys.executable, "-c", "import sys; sys.stderr.write('x' * 70000); sys.stderr.flush()"],
            stderr=stderr, timeout=60, check=False,
        )  # fmt: skip
    finally:
        os.close(stderr)
    assert done.returncode == 1

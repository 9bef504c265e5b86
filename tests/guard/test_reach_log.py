"""The reach log: schema, concurrent appends, torn lines, redaction, failing closed."""

from __future__ import annotations

import json
import multiprocessing
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from named_checks import broken

from cloudguard.documents import reach_log
from cloudguard.guard import reach, redaction

RECORD_KEYS = {"schema", "kind", "at", "via", "argv", "target", "test", "pid", "ppid", "cwd"}


def test_armed_log_round_trips_a_reach_with_the_documented_fields(armed_log: Path) -> None:
    record = reach.reach_record(
        via="az-shim", argv=["az", "vm", "list"], target="az vm list", identity_vars=["AZURE_X"]
    )
    reach.append(str(armed_log), record)

    log = reach_log.read(str(armed_log))

    assert log.header["kind"] == "armed" and log.header["schema"] == reach.SCHEMA
    (found,) = log.reaches
    assert RECORD_KEYS | {"identity_vars"} <= set(found)
    assert found["via"] == "az-shim" and found["argv"] == ["az", "vm", "list"]
    assert found["identity_vars"] == ["AZURE_X"]
    assert found["pid"] == os.getpid()


def test_lines_are_valid_json_as_written(armed_log: Path) -> None:
    reach.append(
        str(armed_log), reach.reach_record(via="x", argv=['quote"', "nl\n", "ü"], target="t")
    )
    for line in armed_log.read_text().splitlines():
        json.loads(line)  # the fast path's hand-rolled encoder must stay JSON


def test_read_from_an_offset_returns_only_later_records(armed_log: Path) -> None:
    reach.append(str(armed_log), reach.reach_record(via="first", argv=[], target="a"))
    offset = reach_log.read(str(armed_log)).end
    reach.append(str(armed_log), reach.reach_record(via="second", argv=[], target="b"))

    assert [r["via"] for r in reach_log.read(str(armed_log), start=offset).reaches] == ["second"]


def _write_many(path: str, writer: int, count: int) -> None:
    for n in range(count):
        reach.append(
            path, reach.reach_record(via="load", argv=["x" * 3000], target=f"{writer}:{n}")
        )


def test_64_concurrent_writers_lose_and_tear_nothing(armed_log: Path) -> None:
    writers, each = 64, 25
    context = multiprocessing.get_context("fork")
    processes = [
        context.Process(target=_write_many, args=(str(armed_log), w, each)) for w in range(writers)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
        assert process.exitcode == 0

    targets = [r["target"] for r in reach_log.read(str(armed_log)).reaches]

    assert len(targets) == writers * each
    assert set(targets) == {f"{w}:{n}" for w in range(writers) for n in range(each)}


def test_a_writer_killed_mid_record_is_refused_and_later_records_stay_whole(
    armed_log: Path,
) -> None:
    # What a writer killed inside its write leaves: a record with no newline.
    with open(armed_log, "ab") as handle:
        handle.write(b'{"schema":1,"kind":"reach","via":"az-sh')
    with pytest.raises(reach_log.ReachLogError, match="line 2 is torn"):
        reach_log.read(str(armed_log))

    reach.append(str(armed_log), reach.reach_record(via="after", argv=[], target="t"))

    lines = armed_log.read_bytes().split(b"\n")
    assert json.loads(lines[2])["via"] == "after"  # our record starts on its own line
    with pytest.raises(reach_log.ReachLogError, match="line 2 is not a JSON record"):
        reach_log.read(str(armed_log))  # and the torn one still fails the check closed


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "never armed"),
        (b'{"schema":1,"kind":"reach","via":"x"}\n', "not armed"),
        (b'{"schema":1,"kind":"armed"}\nnot json\n', "line 2 is not a JSON record"),
        (b'{"schema":1,"kind":"armed"}\n{"schema":2,"kind":"reach"}\n', "line 2 is not a schema 1"),
        (b'{"schema":1,"kind":"armed"}\n{"schema":1,"kind":"nope"}\n', "unknown kind 'nope'"),
    ],
)
def test_unreadable_alarms_fail_closed(tmp_path: Path, content: bytes, message: str) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(content)
    with pytest.raises(reach_log.ReachLogError, match=message):
        reach_log.read(str(log))


def test_a_missing_log_is_not_recreated_by_a_writer(tmp_path: Path) -> None:
    log = tmp_path / "deleted.jsonl"
    with pytest.raises(FileNotFoundError):
        reach.append(str(log), reach.reach_record(via="x", argv=[], target="t"))
    assert not log.exists()
    with pytest.raises(reach_log.ReachLogError, match="does not exist"):
        reach_log.read(str(log))


SECRETS = {
    "--password": "hunter2-pw",
    "-p": "p-flag-secret",
    "--client-secret": "cs-abc123",
    "--sas-token": "sv=2020&sig=abc",
    "--connection-string": "plain-conn",
    "--account-key": "acct-key-value",
    "--aws-secret-access-key": "wJalrXUtnFEMI",
    "--token": "tok-value",
}


@pytest.mark.parametrize(("option", "value"), SECRETS.items())
def test_secret_option_values_are_redacted_in_both_spellings(option: str, value: str) -> None:
    separate = redaction.redact_argv(["az", "login", option, value, "--next"])
    joined = redaction.redact_argv(["az", "login", f"{option}={value}"])

    assert separate == ["az", "login", option, redaction.REDACTED, "--next"]
    assert joined == ["az", "login", f"{option}={redaction.REDACTED}"]


@pytest.mark.parametrize(
    "value",
    [
        "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=c2VjcmV0;EndpointSuffix=x",
        "https://acct.blob.core.windows.net/c?sv=2022-11-02&sig=abcdef",
        "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXZhbHVl",
        "AKIAIOSFODNN7EXAMPLE",
        "-----BEGIN RSA PRIVATE KEY-----",
        "Server=db;User Id=sa;Password=hunter2;",
    ],
)
def test_secret_looking_values_are_redacted_wherever_they_stand(value: str) -> None:
    assert redaction.redact_argv(["tool", value]) == ["tool", redaction.REDACTED]


def test_ordinary_arguments_are_kept() -> None:
    argv = ["az", "vm", "create", "--size", "Standard_D4as_v6", "--tags", "task-id=cloud-noenv-c7"]
    assert redaction.redact_argv(argv) == argv


def test_non_utf8_and_oversized_arguments_are_bounded_text() -> None:
    argv = [os.fsdecode(b"bad-\xff\xfe"), "y" * (redaction.MAX_ARG_CHARS + 10)]
    argv += ["z"] * (redaction.MAX_ARGS + 5)

    out = redaction.redact_argv(argv)

    assert out[0] == "bad-\\xff\\xfe"
    assert out[1].endswith("...<10 more chars>") and len(out[1]) < redaction.MAX_ARG_CHARS + 30
    assert out[-1] == f"...<{len(argv) - redaction.MAX_ARGS} more args>"
    assert len(out) == redaction.MAX_ARGS + 1


def _via(line: bytes) -> object:
    try:
        return json.loads(line).get("via")
    except ValueError:
        return None  # not one JSON record: glued onto the torn line


CUT_SHORT_WRITER = """
import sys
from cloudguard.guard import reach
reach.append(sys.argv[1], reach.reach_record(via="big", argv=[], target="x" * 100_000))
"""


def test_a_write_cut_short_leaves_a_torn_line_refused_and_the_next_record_whole(
    armed_log: Path,
) -> None:
    """A real writer whose append the kernel cuts short (a file-size limit 1000 bytes past the
    header stops its write there, as a fatal signal mid-write would): the log ends in a torn
    line, every reader refuses it, and the next writer's record is whole on a line of its own.
    """
    limit = armed_log.stat().st_size + 1000

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    writer = subprocess.run(
        [sys.executable, "-c", CUT_SHORT_WRITER, str(armed_log)],
        preexec_fn=limited,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    data = armed_log.read_bytes()
    assert writer.returncode != 0 and "short write to reach log" in writer.stderr, writer.stderr
    assert len(data) == limit and not data.endswith(b"\n"), "the write was not cut short"
    with pytest.raises(reach_log.ReachLogError, match="line 2 is torn"):
        reach_log.read(str(armed_log))

    reach.append(str(armed_log), reach.reach_record(via="after", argv=[], target="t"))

    lines = armed_log.read_bytes().split(b"\n")
    assert len(lines) == 4 and lines[-1] == b"" and _via(lines[2]) == "after", broken(
        "the-next-record-is-whole", f"the next record is not whole on its own line: {lines[1:]!r}"
    )
    with pytest.raises(reach_log.ReachLogError, match="line 2 is not a JSON record"):
        reach_log.read(str(armed_log))  # and the torn one still fails the check closed

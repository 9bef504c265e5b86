"""The reap log never lies: intent on disk before acting, torn lines never continued, a log
that fails mid-run stops the run with 75, files nobody else chose, text escaped for a terminal."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
import reap_fake_adapter as cloud
from named_checks import broken
from reap_helpers import audit_report, cli, digest, entry, fleet, planned_fleet, write_json
from second_uid import another_users_file, refused_to_the_second_user

from cloudguard.cloud import adapter_registry
from cloudguard.documents import reap_log
from cloudguard.documents.plan import load_plan, plan_document


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    adapters = {"azure": entry("FakeAdapter"), "aws": entry("FakeAws")}
    monkeypatch.setattr(adapter_registry, "installed_adapters", lambda: adapters)
    plan, home = planned_fleet(tmp_path)
    path = write_json(tmp_path / "plan.json", plan_document(plan))
    return {"plan": path, "home": home, "log": tmp_path / "reap.jsonl", "tmp": tmp_path}


def apply(setup: dict[str, Path], *extra: str, log: Path | None = None) -> Any:
    return cli(
        "reap",
        "apply",
        str(setup["plan"]),
        "--controller-home",
        str(setup["home"]),
        "--leaked-by",
        "run-id=ci-77",
        "--log",
        str(log or setup["log"]),
        *extra,
    )


def act(setup: dict[str, Path]) -> Any:
    return apply(setup, "--yes", "--approve", digest(setup["plan"]))


def test_the_intent_is_fsynced_before_the_action_is_sent(
    setup: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: dict[int, int] = {}  # fd -> bytes on disk at its last fsync
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        real_fsync(fd)
        synced[fd] = os.fstat(fd).st_size

    monkeypatch.setattr(reap_log.os, "fsync", fsync)
    seen: list[str] = []
    unsynced: list[str] = []  # judged here, after the run: the engine catches what act raises

    def inside_the_action(item: Any) -> None:
        data = setup["log"].read_bytes()
        last = json.loads(data.splitlines()[-1])
        on_disk = [size for fd, size in synced.items() if _is(fd, setup["log"])]
        if (last["event"], last["id"]) != ("intent", item.id):
            unsynced.append(f"no intent before acting on {item.name}")
        elif not on_disk or max(on_disk) != len(data):
            unsynced.append(
                f"intent for {item.name} not fsynced before acting "
                f"({len(data)} bytes written, fsynced {on_disk})"
            )
        seen.append(item.id)

    cloud.ON_ACT.append(inside_the_action)

    done = act(setup)

    assert seen == [i.id for i in load_plan(setup["plan"]).items], done.output
    assert unsynced == [], broken("the-intent-is-fsynced-first", "; ".join(unsynced))
    assert done.exit_code == 0, done.output


def _is(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), path.stat())
    except OSError:
        return False


def test_a_torn_line_is_never_continued_by_the_next_record(setup: dict[str, Path]) -> None:
    torn = b'{"event": "intent", "id": "/subscriptions/x/resourceGroups/pil'
    setup["log"].write_bytes(b'{"event": "end"}\n' + torn)

    done = apply(setup)

    assert done.exit_code == 0, done.output
    lines = setup["log"].read_bytes().split(b"\n")
    assert lines[1] == torn, broken(
        "a-torn-line-is-not-continued", f"a record was glued onto the torn line: {lines[1][:120]!r}"
    )
    assert all(json.loads(line)["run"] for line in lines[2:-1])
    assert lines[-1] == b""


def test_a_log_that_fills_up_mid_run_is_75_and_nothing_is_acted_on_after_it(
    setup: dict[str, Path],
) -> None:
    """The first action fails (1), then the disk is full (/dev/full behind the log's fd):
    the run stops at once, no later item is acted on, and 75 wins over 1."""
    first = load_plan(setup["plan"]).items[0].id
    cloud.ACT_FAILS.add(first)

    def disk_fills_up(item: Any) -> None:
        if item.id != first:
            return
        full = os.open("/dev/full", os.O_WRONLY)
        for name in os.listdir("/proc/self/fd"):
            try:
                if os.path.realpath(f"/proc/self/fd/{name}") == str(setup["log"].resolve()):
                    os.dup2(full, int(name))
            except OSError:
                continue
        os.close(full)

    cloud.ON_ACT.append(disk_fills_up)

    done = act(setup)

    assert done.exit_code == 75, broken(
        "a-failed-log-write-stops-the-run",
        f"exit {done.exit_code} with a log that cannot be written",
    )
    assert "stopped: cannot write reap log" in done.output
    assert cloud.ACTED == [], f"acted after the log failed: {cloud.ACTED}"
    assert [json.loads(x)["event"] for x in setup["log"].read_text().splitlines()] == [
        "start",
        "intent",
    ]


def test_75_wins_over_1(setup: dict[str, Path]) -> None:
    ids = [i.id for i in load_plan(setup["plan"]).items]
    cloud.ACT_FAILS.add(ids[0])
    cloud.READ_FAILS.add(ids[1])

    done = act(setup)

    assert done.exit_code == 75, broken(
        "75-wins-over-1", f"exit {done.exit_code}: a failed action hid an unread item"
    )
    assert [e for e in ids[2:] if e not in [a for a, _ in cloud.ACTED]] == []


# -- files nobody else chose -------------------------------------------------------------------


def test_a_log_that_is_a_symlink_is_refused_and_its_target_untouched(
    setup: dict[str, Path],
) -> None:
    target = setup["tmp"] / "victim"
    target.write_text("precious\n")
    link = setup["tmp"] / "planted.jsonl"
    link.symlink_to(target)

    done = act_with_log(setup, link)

    assert done.exit_code == 75, done.output
    assert "cannot open reap log" in done.output
    assert target.read_text() == "precious\n"
    assert cloud.READ == []


def act_with_log(setup: dict[str, Path], log: Path) -> Any:
    return apply(setup, "--yes", "--approve", digest(setup["plan"]), log=log)


def test_a_log_owned_by_someone_else_is_refused(second_user: Path) -> None:
    """Opened by the second user (uid 65534): a log of ours it could write (0666)."""
    theirs = another_users_file(second_user, "theirs.jsonl", b"")

    refused_to_the_second_user(
        second_user,
        "from cloudguard.documents.reap_log import ReapLog, ReapLogError as Refused",
        'ReapLog("theirs.jsonl", echo=print, new=False)',
        check="another-users-log-refused",
        what="another user's reap log was opened",
    )
    assert theirs.read_text() == ""


def test_the_default_log_is_new_unguessable_and_private(setup: dict[str, Path]) -> None:
    done = cli("reap", "apply", str(setup["plan"]), "--controller-home", str(setup["home"]))
    again = cli("reap", "apply", str(setup["plan"]), "--controller-home", str(setup["home"]))

    assert done.exit_code == 0 and again.exit_code == 0, done.output
    # In the user's state, never the working directory (a checkout: one more untracked file).
    assert not list(Path.cwd().glob("cloudguard-reap-*.jsonl")), broken(
        "the-default-log-is-not-in-the-checkout", "a default reap log was written here"
    )
    directory = Path(os.environ["XDG_STATE_HOME"]) / "cloudguard" / "reap-logs"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert f"log written to {directory}/cloudguard-reap-" in done.stderr, done.stderr
    logs = sorted(directory.glob("cloudguard-reap-*.jsonl"))
    assert len(logs) == 2, logs  # two runs in one second: two names, neither guessed
    for log in logs:
        assert len(log.stem.rsplit("-", 1)[-1]) == 12
        assert stat.S_IMODE(log.stat().st_mode) == 0o600


def test_plan_output_is_never_written_through_a_symlink(setup: dict[str, Path]) -> None:
    report = write_json(setup["tmp"] / "audit.json", audit_report(fleet(), setup["home"]))
    target = setup["tmp"] / "victim"
    target.write_text("precious\n")
    link = setup["tmp"] / "plan-link.json"
    link.symlink_to(target)

    done = cli("reap", "plan", "--from", str(report), "--output", str(link))

    assert done.exit_code == 75, done.output
    assert target.read_text() == "precious\n"
    fresh = setup["tmp"] / "fresh-plan.json"
    assert cli("reap", "plan", "--from", str(report), "--output", str(fresh)).exit_code == 0
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600


def test_the_plan_table_and_reap_lines_escape_what_the_cloud_named(
    setup: dict[str, Path],
) -> None:
    report = audit_report(fleet(), setup["home"])
    finding = next(f for f in report["findings"] if f["resource"]["name"] == "vm-orphan")
    finding["resource"]["name"] = "vm-\x1b]0;owned\x07\x1b[31mred"
    finding["resource"]["region"] = "west\x1b[2Jeurope"
    path = write_json(setup["tmp"] / "audit.json", report)

    done = cli("reap", "plan", "--from", str(path), "--output", str(setup["tmp"] / "p.json"))

    assert done.exit_code == 0, done.output
    assert "\x1b" not in done.output and "\x07" not in done.output
    assert "vm-" in done.output


def test_a_plan_item_with_no_account_is_refused(setup: dict[str, Path]) -> None:
    document = json.loads(setup["plan"].read_text())
    document["items"][0]["account"] = ""
    write_json(setup["plan"], document)

    done = apply(setup)

    assert done.exit_code == 2 and "no account" in done.output
    assert cloud.READ == []

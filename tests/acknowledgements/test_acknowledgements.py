"""Acknowledgements: owner, reason and an expiry; the reviewed file is read strictly.

A typo in the file must not silently acknowledge nothing (or everything): each
bad entry is refused naming the file and the entry (the audit exits 97).
"""

from __future__ import annotations

import os
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from named_checks import broken

from cloudguard.acknowledgements import (
    Ack,
    AckBook,
    AckError,
    AckFileError,
    parse_until,
    read_ack_file,
    validated,
)

NOW = datetime(2025, 6, 1, 2, 0, tzinfo=UTC)
VM = (
    "/subscriptions/0000-sub/resourceGroups/pilot/providers/Microsoft.Compute/"
    "virtualMachines/vm-smoke-wkr-01"
)


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cloudguard-acks.toml"
    path.write_text(text)
    path.chmod(0o644)
    return path


def test_the_reviewed_file_gives_each_entry_with_where_it_came_from(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        f"""
[[ack]]
id = "{VM}"
owner = "platform-team"
reason = "the smoke fleet's VM, kept for the demo"
until = 2025-09-30

[[ack]]
id = "i-0abc"
owner = "alice"
reason = "load test"
until = "2025-06-01"
""",
    )
    first, second = read_ack_file(path, NOW)
    assert first == Ack(VM, "platform-team", "the smoke fleet's VM, kept for the demo",
                        date(2025, 9, 30), f"{path} ack #1")  # fmt: skip
    assert (second.id, second.until, second.source) == (
        "i-0abc",
        date(2025, 6, 1),
        f"{path} ack #2",
    )


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ('id = "x"\nowner = "o"\nreason = "r"\nuntil = 2025-07-01\nowners = "typo"',
         "ack #1: unknown key 'owners'"),
        ('id = "x"\nowner = "o"\nuntil = 2025-07-01', "ack #1: missing 'reason'"),
        ('id = "x"\nowner = ""\nreason = "r"\nuntil = 2025-07-01',
         "ack #1 (x): owner: must not be empty"),
        ('id = "x"\nowner = "o"\nreason = "r"\nuntil = "next week"', "not a date (YYYY-MM-DD)"),
        ('id = "x"\nowner = "o"\nreason = "r"\nuntil = 2025-07-01T00:00:00', "must be a date"),
        ('id = "x"\nowner = "o"\nreason = "r"\nuntil = 2026-06-03', "more than a year ahead"),
        ('id = 7\nowner = "o"\nreason = "r"\nuntil = 2025-07-01', "ack #1: id: must be a string"),
    ],
)  # fmt: skip
def test_a_bad_entry_is_refused_naming_it(tmp_path: Path, entry: str, problem: str) -> None:
    path = _file(tmp_path, f"[[ack]]\n{entry}\n")
    with pytest.raises(AckFileError) as raised:
        read_ack_file(path, NOW)
    assert str(path) in str(raised.value) and problem in str(raised.value)


def test_an_expired_entry_in_the_file_is_read_so_that_the_report_can_say_so(
    tmp_path: Path,
) -> None:
    path = _file(tmp_path, '[[ack]]\nid = "x"\nowner = "o"\nreason = "r"\nuntil = 2025-01-01\n')
    (ack,) = read_ack_file(path, NOW)
    state = AckBook([ack], NOW).state("x", case_insensitive=False)
    assert state is not None and state.expired


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[ack]\nid = 'x'", "ack: must be an array of tables"),
        ("[[acks]]\nid = 'x'", "unknown table or key 'acks'"),
        ("[[ack]\n", "invalid TOML"),
    ],
)
def test_a_file_of_another_shape_is_refused(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(AckFileError, match=problem):
        read_ack_file(_file(tmp_path, text), NOW)


def test_a_file_others_can_write_is_not_trusted(tmp_path: Path) -> None:
    path = _file(tmp_path, "")
    assert read_ack_file(path, NOW) == ()  # the control: the same file, trusted
    path.chmod(0o666)
    with pytest.raises(AckFileError, match="writable by group or others"):
        read_ack_file(path, NOW)
    path.chmod(0o644)
    os.chown(path, 65534, 65534)
    with pytest.raises(AckFileError, match="owned by uid 65534"):
        read_ack_file(path, NOW)


def test_a_new_acknowledgement_needs_an_owner_a_reason_and_a_date_ahead() -> None:
    ack = Ack(VM, "alice", "demo", date(2025, 6, 1), "cloudguard ack")
    assert validated(ack, NOW, new=True) == ack, "today is still ahead: through its end"
    with pytest.raises(AckError, match="already past"):
        validated(Ack(VM, "alice", "demo", date(2025, 5, 31), "cloudguard ack"), NOW, new=True)
    with pytest.raises(AckError, match="reason: must not be empty"):
        validated(Ack(VM, "alice", " ", date(2025, 7, 1), "cloudguard ack"), NOW, new=True)
    with pytest.raises(AckError, match="not a date"):
        parse_until("31/12/2025")


def test_a_finding_is_matched_as_its_cloud_compares_ids() -> None:
    live = Ack(VM, "alice", "demo", date(2025, 7, 1), "cloudguard ack")
    lapsed = Ack(VM, "bob", "old", date(2025, 5, 1), "cloudguard-acks.toml ack #1")
    book = AckBook([lapsed, live, Ack("i-0abc", "carol", "r", date(2025, 5, 31), "x")], NOW)
    state = book.state(VM.upper(), case_insensitive=True)  # ARM ids: case ignored
    assert state is not None, broken(
        "arm-ids-matched-case-insensitively", "an ARM id in another case found no acknowledgement"
    )
    assert (state.ack, state.expired) == (live, False)
    assert book.state(VM.upper(), case_insensitive=False) is None, "EC2 ids: compared exactly"
    expired = book.state("i-0abc", case_insensitive=False)
    assert expired is not None and expired.expired and expired.ack.owner == "carol"

"""Acknowledgements: "known, owned by X, because Y, until Z" for one resource.

An acknowledgement never hides a finding: every report still shows it, marked
acknowledged with its owner, reason and date, and it stops counting towards
the audit's failure. When its date has passed it is *expired*: the finding is
loud again (it counts, it is notified) and the report says whose
acknowledgement lapsed. Each has an owner, a reason and an expiry no more
than a year ahead: an acknowledgement is a decision to revisit, not an
exclusion.

They come from two places, read alike: `cloudguard ack ID --reason ... --until
DATE` (kept in the history store) and a reviewed file in the repository, as
pip-audit's ignore list is reviewed with the code:

    [[ack]]
    id = "/subscriptions/.../virtualMachines/vm-smoke-wkr-01"
    owner = "platform-team"
    reason = "the smoke fleet's VM, kept for the demo"
    until = 2025-09-30

Stdlib only.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from cloudguard.project_file import UntrustedFileError, check_trusted

MAX_AHEAD = timedelta(days=366)
FILE_KEYS = ("id", "owner", "reason", "until")


@dataclass(frozen=True, slots=True)
class Ack:
    id: str  # the resource's cloud id
    owner: str
    reason: str
    until: date  # acknowledged through the end of this day (UTC)
    source: str  # where it was made: "cloudguard ack", or the file and entry


@dataclass(frozen=True, slots=True)
class AckState:
    ack: Ack
    expired: bool


class AckError(ValueError):
    """An acknowledgement that cannot be taken: the message names the field."""


class AckFileError(Exception):
    """The acknowledgements file cannot be read or has an invalid entry (exit 97)."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


def today(now: datetime) -> date:
    return now.astimezone(UTC).date()


def validated(ack: Ack, now: datetime, *, new: bool) -> Ack:
    """`ack`, or AckError naming what is missing. A new one must not be expired already."""
    for name in ("id", "owner", "reason"):
        if not getattr(ack, name).strip():
            raise AckError(f"{name}: must not be empty")
    if ack.until - today(now) > MAX_AHEAD:
        raise AckError(
            f"until {ack.until.isoformat()}: more than a year ahead; an acknowledgement is "
            "revisited at least once a year"
        )
    if new and ack.until < today(now):
        raise AckError(f"until {ack.until.isoformat()}: already past")
    return ack


def parse_until(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise AckError(f"until {text!r}: not a date (YYYY-MM-DD)") from None


def read_ack_file(path: Path, now: datetime) -> tuple[Ack, ...]:
    """Every `[[ack]]` entry of `path`, each checked; AckFileError naming the first bad one."""
    try:
        check_trusted(path, os.lstat(path))
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except UntrustedFileError as error:
        raise AckFileError(path, error.reason) from None
    except (OSError, UnicodeDecodeError) as error:
        raise AckFileError(path, f"cannot be read: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise AckFileError(path, f"invalid TOML: {error}") from None
    unknown = sorted(set(document) - {"ack"})
    if unknown:
        raise AckFileError(path, f"unknown table or key {unknown[0]!r} (known: [[ack]])")
    entries = document.get("ack", [])
    if not isinstance(entries, list):
        raise AckFileError(path, "ack: must be an array of tables ([[ack]])")
    return tuple(_entry(path, index, entry, now) for index, entry in enumerate(entries, 1))


def _entry(path: Path, index: int, entry: object, now: datetime) -> Ack:
    where = f"ack #{index}"
    if not isinstance(entry, dict):
        raise AckFileError(path, f"{where}: must be a table")
    unknown = sorted(set(entry) - set(FILE_KEYS))
    missing = [key for key in FILE_KEYS if key not in entry]
    if unknown or missing:
        problem = f"unknown key {unknown[0]!r}" if unknown else f"missing {missing[0]!r}"
        raise AckFileError(path, f"{where}: {problem} (keys: {', '.join(FILE_KEYS)})")
    for key in ("id", "owner", "reason"):
        if not isinstance(entry[key], str):
            raise AckFileError(path, f"{where}: {key}: must be a string")
    until = entry["until"]
    try:
        if isinstance(until, str):
            until = parse_until(until)
        elif isinstance(until, datetime) or not isinstance(until, date):
            raise AckError(f"until {until!r}: must be a date (YYYY-MM-DD)")
        ack = Ack(entry["id"], entry["owner"], entry["reason"], until, f"{path} {where}")
        return validated(ack, now, new=False)
    except AckError as error:
        raise AckFileError(path, f"{where} ({entry['id']}): {error}") from None


class AckBook:
    """Acknowledgements by resource id: which one, if any, covers a finding, and is it live."""

    def __init__(self, acks: Iterable[Ack], now: datetime) -> None:
        self._today = today(now)
        self._exact: dict[str, list[Ack]] = {}
        self._folded: dict[str, list[Ack]] = {}
        for ack in acks:
            self._exact.setdefault(ack.id, []).append(ack)
            self._folded.setdefault(ack.id.casefold(), []).append(ack)

    def state(self, resource_id: str, *, case_insensitive: bool) -> AckState | None:
        """The acknowledgement that lasts longest (expired when even that one has lapsed)."""
        index, key = (
            (self._folded, resource_id.casefold())
            if case_insensitive
            else (self._exact, resource_id)
        )
        found = index.get(key)
        if not found:
            return None
        latest = max(found, key=lambda ack: ack.until)
        return AckState(latest, expired=latest.until < self._today)

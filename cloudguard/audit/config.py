"""Values of the `[audit]` and `[reap]` tables of `cloudguard.toml` and of the command line.

Every command-line option can live in `[audit]`, so a scheduled job is
`cloudguard audit` and nothing else. The file is `--config FILE`, or the
nearest trusted `cloudguard.toml` from the working directory up to the
repository root, then `$HOME` (cloudguard.project_file, which also reads it).
Keys are the long option names (`controller-home`, `fail-on`), declared once
with their parsers in cloudguard.audit.options; paths are relative to the
file. An unknown key or a bad value is a `ConfigError` naming the key
(exit 97): a typo must not silently drop a check. The same parsers read the
command line, where a bad value is a usage error (2). The simplest parsers
(string, choice, ...) are the cloud kernel's, for adapters to share.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path

from cloudguard import project_file
from cloudguard.audit.formats import FORMAT_NAMES
from cloudguard.cloud.options import OptionValueError

CONFIG_NAME = project_file.PROJECT_FILE
FORMATS = FORMAT_NAMES  # the report formats --format accepts
FAIL_ON = ("orphan", "suspect", "new")


class ConfigError(Exception):
    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where


def parse_duration(value: object) -> timedelta:
    """`2h`, `90m`, `1h30m`, `45s`, `1d`: a unit is required.

    A bare number (`grace = 5` in TOML, `--grace 5`) is refused rather than
    guessed: it was silently seconds (and `2.5` two seconds) where a reader
    meant hours or minutes, and the grace period decides orphan vs pending.
    """
    if isinstance(value, bool):
        raise OptionValueError(f"not a duration: {value!r}")
    if isinstance(value, int | float):
        raise OptionValueError(
            f"a bare number is not a duration, give its unit (e.g. {value}h, {value}m, "
            f"{value}s): {value!r}"
        )
    text = str(value).strip()
    parts = re.fullmatch(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", text)
    if not text or parts is None:
        raise OptionValueError(f"not a duration (use e.g. 2h, 90m, 1h30m): {value!r}")
    days, hours, minutes, seconds = (int(p or 0) for p in parts.groups())
    return timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)


def parse_positive_duration(value: object) -> timedelta:
    duration = parse_duration(value)
    if duration <= timedelta(0):
        raise OptionValueError(f"expected a duration above zero: {value!r}")
    return duration


def parse_argv(value: object) -> tuple[str, ...]:
    """A command as an argv list (TOML) or one string split like a shell would
    split words (no shell ever runs it: no expansion, no pipes)."""
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return tuple(value)
    if isinstance(value, str):
        try:
            argv = tuple(shlex.split(value))
        except ValueError as exc:
            raise OptionValueError(f"cannot split into words: {exc}") from exc
        if argv:
            return argv
    raise OptionValueError(f"expected a command (a string or a list of strings), got {value!r}")


def find_config(start: Path) -> Path | None:
    """The nearest trusted cloudguard.toml: the seal's finder (cloudguard.project_file)."""
    try:
        return project_file.find_project_file(start)
    except project_file.UntrustedFileError as exc:
        raise ConfigError(str(exc.path), exc.reason) from None


def unknown_key(key: str, known: Iterable[str]) -> str:
    """Why `key` is refused, with the closest known key when there is one."""
    import difflib

    known = sorted(known)
    close = difflib.get_close_matches(key, known, n=1)
    if close:
        return f"unknown key; did you mean {close[0]!r}? (known: {', '.join(known)})"
    return f"unknown key (known: {', '.join(known)})"

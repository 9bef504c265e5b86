"""Values of the `[audit]` and `[reap]` tables of `cloudguard.toml` and of the command line.

Every command-line option can live in `[audit]`, so a scheduled job is
`cloudguard audit` and nothing else. The file is `--config FILE`, or the
nearest trusted `cloudguard.toml` from the working directory up to the
repository root, then `$HOME` (cloudguard.project_file, which also reads it).
Keys are the long option names (`controller-home`, `fail-on`), declared once
with their parsers in cloudguard.settings.core_options; paths are relative to the
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
FAIL_ON = ("orphan", "suspect", "unverified", "new")


class ConfigError(Exception):
    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where


# The longest duration any option takes: a century is already no limit for a grace or a
# plan's age, and a longer one overflowed (`--grace 99999999999999999999d`).
LONGEST = timedelta(days=36_500)


def parse_duration(value: object, longest: timedelta = LONGEST) -> timedelta:
    """`2h`, `90m`, `1h30m`, `45s`, `1d`: a unit is required; at most `longest`.

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
    # [0-9], not \d: "١h" (an Arabic-Indic one) is no duration a reader would type.
    parts = re.fullmatch(r"(?:([0-9]+)d)?(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?", text)
    if not text or parts is None:
        raise OptionValueError(f"not a duration (use e.g. 2h, 90m, 1h30m): {value!r}")
    days, hours, minutes, seconds = (int(p or 0) for p in parts.groups())
    seconds_in_all = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    if seconds_in_all > longest.total_seconds():
        raise OptionValueError(f"too long: at most {_shown(longest)}, got {text}")
    return timedelta(seconds=seconds_in_all)


def parse_positive_duration(value: object, longest: timedelta = LONGEST) -> timedelta:
    duration = parse_duration(value, longest)
    if duration <= timedelta(0):
        raise OptionValueError(f"expected a duration above zero: {value!r}")
    return duration


def _shown(duration: timedelta) -> str:
    days, seconds = duration.days, duration.seconds
    return f"{days}d" if not seconds else f"{days * 24 + seconds // 3600}h"


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

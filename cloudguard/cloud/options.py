"""How an option is declared, once, by whoever owns it: the core, an evidence source, an adapter.

A declaration (`Option`) carries everything the command line and
cloudguard.toml need: the key (the long flag and the config key), the value
parser, the default, the flags, how each command shows it in `--help`, and
whether it is a path resolved against the config file's directory. The
auditor derives its typer parameters and its `[audit]` / `[reap]` keys from
these (cloudguard.settings.option_spec); an owner reads its resolved values by
name (`Option.value_in`). Stdlib only.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

# What a discovered cloudguard.toml may not set until the operator trusted it: an owner
# declares it on the option (`trust=NeedsTrust(...)`), as it declares everything else.
from cloudguard.trust_store import NeedsTrust as NeedsTrust

# The commands that take options.
AUDIT = "audit"
REAP_APPLY = "reap apply"

# The --help panels options are shown in (None: the command's general "Options").
LIVE_PANEL = "Live providers"
EVIDENCE_PANEL = "Evidence"


class OptionValueError(ValueError):
    """A value no option accepts; the CLI reports it as usage (2), config as admission (97).

    `flag` names the option to blame when it is not the one being parsed (two options
    that must go together)."""

    def __init__(self, message: str, flag: str | None = None) -> None:
        super().__init__(message)
        self.flag = flag


@dataclass(frozen=True)
class Shown:
    """How one command shows an option in its --help."""

    help: str
    metavar: str | None = None


@dataclass(frozen=True)
class Option:
    name: str  # the Python name: the settings field and the typer parameter
    parse: Callable[[object], Any]  # one value (a TOML value or a command-line string)
    default: Any
    shown: Mapping[str, Shown]  # command -> its help text and metavar; the commands using it
    flags: tuple[str, ...] = ()  # all of them; empty: just --<key>
    cli_type: type = str  # what typer parses before `parse` (str, int or bool)
    many: bool = False  # repeatable; a list in TOML (a lone string is accepted too)
    list_only: bool = False  # with many: a lone string is refused in TOML
    path: bool = False  # resolved against the config file's directory ("-" stays stdin)
    section: str | None = "audit"  # its cloudguard.toml table; None: command line only
    on_command_line: bool = True  # False: only in cloudguard.toml
    panel: str | None = None  # the --help panel
    min: int | None = None
    show_default: bool = True
    # Its value says where evidence is read from (a controller home, a repository): a reap
    # plan binds the audit's value, and `reap apply` must name the same.
    locates: bool = False
    # Runs a program, sends credentials, widens what is read, acted in or written: from a
    # discovered cloudguard.toml only once the operator trusted it (docs/reference.md).
    trust: NeedsTrust | None = None
    # The values shell completion offers (asked only when completing: the installed
    # adapters' names, say); a `choice` parser's choices are offered without it.
    complete: Callable[[], Iterable[str]] | None = None
    # Checked once its value is whole (a path made absolute against its config file): a file
    # the option names must be there when it is parsed, not found missing inside a sweep.
    check: Callable[[Any], None] | None = None

    @property
    def key(self) -> str:
        """The long option name and the config key: `controller-home`."""
        return self.name.replace("_", "-")

    @property
    def flag(self) -> str:
        """How errors name it: the long flag (`--report`)."""
        return (self.flags or (f"--{self.key}",))[0].split("/")[0]

    def value_in(self, values: Mapping[str, Any]) -> Any:
        """Its resolved value among `values` (by name), or its default when not there."""
        return values.get(self.name, self.default)


def declare(
    name: str,
    *,
    parse: Callable[[object], Any],
    default: Any,
    help: str = "",
    metavar: str | None = None,
    audit: bool = True,
    apply: Shown | bool = False,
    **details: Any,
) -> Option:
    """An `Option`: shown by `audit` with `help`, and by `reap apply` with `help` too
    (`apply=True`) or with its own (`apply=Shown(...)`)."""
    shown: dict[str, Shown] = {}
    if audit:
        shown[AUDIT] = Shown(help, metavar)
    if apply is True:
        shown[REAP_APPLY] = Shown(help, metavar)
    elif isinstance(apply, Shown):
        shown[REAP_APPLY] = apply
    return Option(name=name, parse=parse, default=default, shown=shown, **details)


# -- value parsers an owner may reuse ----------------------------------------------------


def string(value: object) -> str:
    if not isinstance(value, str):
        raise OptionValueError(f"expected a string, got {type(value).__name__}")
    return value


def positive_int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionValueError(f"expected a whole number >= 1, got {value!r}")
    return value


def boolean(value: object) -> bool:
    if not isinstance(value, bool):
        raise OptionValueError(f"expected true or false, got {value!r}")
    return value


def choice(choices: tuple[str, ...]) -> Callable[[object], str]:
    def check(value: object) -> str:
        if value not in choices:
            raise OptionValueError(f"{value!r} is not one of {', '.join(choices)}")
        return str(value)

    check.choices = choices  # type: ignore[attr-defined]  # what shell completion offers
    return check


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


def readable_file(value: object) -> None:
    """A path to a regular file this process can read (a check: see `Option.check`)."""
    if not isinstance(value, str):
        return
    try:
        mode = os.stat(value).st_mode
    except OSError as exc:
        raise OptionValueError(
            f"{value}: {exc.strerror or exc}: expected a readable file"
        ) from None
    if stat.S_ISDIR(mode):
        raise OptionValueError(f"{value} is a directory: expected a readable file")
    if not stat.S_ISREG(mode):
        raise OptionValueError(f"{value} is not a regular file: expected a readable file")
    try:
        with open(value, "rb"):
            pass
    except OSError as exc:
        raise OptionValueError(
            f"{value}: {exc.strerror or exc}: expected a readable file"
        ) from None


def completions(declared: Option) -> tuple[str, ...]:
    """The values shell completion offers for `declared` (none: any value goes)."""
    if declared.complete is not None:
        return tuple(declared.complete())
    return tuple(getattr(declared.parse, "choices", ()))

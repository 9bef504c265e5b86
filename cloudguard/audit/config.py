"""The `[audit]` table of `cloudguard.toml`: every command-line option can live there.

So a scheduled job is `cloudguard audit` and nothing else. The file is
`--config FILE`, or the nearest trusted `cloudguard.toml` from the working
directory up to the repository root, then `$HOME` (cloudguard.project_file).
Keys are the long option names (`controller-home`, `fail-on`);
paths are relative to the file. An unknown key or a bad value is a
`ConfigError` naming the key (exit 97): a typo must not silently drop a check.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from cloudguard import project_file
from cloudguard.audit.formats import FORMAT_NAMES as FORMATS

CONFIG_NAME = project_file.PROJECT_FILE
FAIL_ON = ("orphan", "suspect")
ENGINES = ("auto", "arm", "resource-graph")  # how the Azure adapter sweeps
ACCOUNTS_FROM = ("organizations",)  # where the AWS adapter finds more accounts


class ConfigError(Exception):
    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where


class OptionValueError(ValueError):
    """A value no option accepts; the CLI reports it as usage, config as admission."""


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


def parse_leaked_by(value: str) -> tuple[str, str]:
    key, sep, tag_value = value.partition("=")
    if not sep or not key.strip():
        raise OptionValueError(f"expected KEY=VALUE: {value!r}")
    return key.strip(), tag_value


def parse_choice(choices: tuple[str, ...]) -> Callable[[object], str]:
    def check(value: object) -> str:
        if value not in choices:
            raise OptionValueError(f"{value!r} is not one of {', '.join(choices)}")
        return str(value)

    return check


def _string(value: object) -> str:
    if not isinstance(value, str):
        raise OptionValueError(f"expected a string, got {type(value).__name__}")
    return value


def _positive_int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionValueError(f"expected a whole number >= 1, got {value!r}")
    return value


def _boolean(value: object) -> bool:
    if not isinstance(value, bool):
        raise OptionValueError(f"expected true or false, got {value!r}")
    return value


@dataclass(frozen=True)
class _Key:
    parse: Callable[[object], Any]
    many: bool = False  # a list in TOML (a repeatable option); a lone string is accepted too
    path: bool = False  # resolved against the config file's directory ("-" stays stdin)


KEYS: dict[str, _Key] = {
    "inventory": _Key(_string, many=True, path=True),
    "provider": _Key(_string, many=True),
    "subscription": _Key(_string, many=True),
    "all-subscriptions": _Key(_boolean),
    "resource-group": _Key(_string, many=True),
    "region": _Key(_string, many=True),
    "credential": _Key(_string),
    "concurrency": _Key(_positive_int),
    "retries": _Key(_positive_int),
    "management-endpoint": _Key(_string),
    "ca-bundle": _Key(_string, path=True),
    "engine": _Key(parse_choice(ENGINES)),
    "accounts-from": _Key(parse_choice(ACCOUNTS_FROM)),
    "assume-role": _Key(_string),
    "task-tag": _Key(_string),
    "generation-tag": _Key(_string),
    "controller-home": _Key(_string, path=True),
    "controller-records": _Key(_string, path=True),
    "repo": _Key(_string, path=True),
    "fixtures-from": _Key(_string, many=True, path=True),
    "fixture-ids": _Key(_string, many=True, path=True),
    "grace": _Key(parse_duration),
    "leaked-by": _Key(lambda v: parse_leaked_by(_string(v)), many=True),
    "terraform-state": _Key(_string, many=True, path=True),
    "owned-ids-command": _Key(parse_argv),
    "owned-ids-timeout": _Key(parse_positive_duration),
    "owned-ids": _Key(_string, many=True, path=True),
    "format": _Key(parse_choice(FORMATS)),
    "output": _Key(_string, path=True),
    "fail-on": _Key(parse_choice(FAIL_ON)),
}


def find_config(start: Path) -> Path | None:
    """The nearest trusted cloudguard.toml: the seal's finder (cloudguard.project_file)."""
    try:
        return project_file.find_project_file(start)
    except project_file.UntrustedFileError as exc:
        raise ConfigError(str(exc.path), exc.reason) from None


def load_config(path: Path) -> dict[str, Any]:
    """The validated `[audit]` table of `path`: option key -> parsed value."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), f"cannot read: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), f"not valid TOML: {exc}") from exc
    table = document.get("audit", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: audit", "must be a table ([audit])")
    base = path.parent
    values: dict[str, Any] = {}
    for key, raw in table.items():
        where = f"{path}: audit.{key}"
        spec = KEYS.get(key)
        if spec is None:
            raise ConfigError(where, _unknown_key(key))
        try:
            if spec.many:
                items = [raw] if isinstance(raw, str) else raw
                if not isinstance(items, list):
                    raise OptionValueError(f"expected a list, got {type(raw).__name__}")
                parsed: Any = [_resolve(spec, spec.parse(item), base) for item in items]
            else:
                parsed = _resolve(spec, spec.parse(raw), base)
        except OptionValueError as exc:
            raise ConfigError(where, str(exc)) from exc
        values[key] = parsed
    return values


def _unknown_key(key: str) -> str:
    import difflib

    close = difflib.get_close_matches(key, KEYS, n=1)
    if close:
        return f"unknown key; did you mean {close[0]!r}? (known: {', '.join(sorted(KEYS))})"
    return f"unknown key (known: {', '.join(sorted(KEYS))})"


def _resolve(spec: _Key, value: Any, base: Path) -> Any:
    if spec.path and isinstance(value, str) and value != "-":
        return str((base / Path(value).expanduser()).resolve())
    return value


# -- the [reap] table: what only `cloudguard reap apply` reads ----------------------------

REAP_KEYS: dict[str, _Key] = {
    # Subscriptions / AWS accounts reaping may act in; required for `reap apply --yes`.
    "accounts": _Key(_string, many=True),
    # A plan whose audit is older than this is refused (default 24h).
    "max-age": _Key(parse_duration),
}


def load_reap_config(path: Path) -> dict[str, Any]:
    """The validated `[reap]` table of `path` (absent: empty); a bad key or value is 97."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), f"cannot read: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), f"not valid TOML: {exc}") from exc
    table = document.get("reap", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: reap", "must be a table ([reap])")
    values: dict[str, Any] = {}
    for key, raw in table.items():
        where = f"{path}: reap.{key}"
        spec = REAP_KEYS.get(key)
        if spec is None:
            raise ConfigError(where, f"unknown key (known: {', '.join(sorted(REAP_KEYS))})")
        try:
            if spec.many:
                if not isinstance(raw, list):
                    raise OptionValueError(f"expected a list, got {type(raw).__name__}")
                values[key] = [spec.parse(item) for item in raw]
            else:
                values[key] = spec.parse(raw)
        except OptionValueError as exc:
            raise ConfigError(where, str(exc)) from exc
    return values

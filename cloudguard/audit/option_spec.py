"""What one option of `audit` / `reap apply` is, declared once, and what is derived from it.

A declaration (`Option`) carries everything the command line and
cloudguard.toml need: the key (the long flag and the config key), the value
parser, the default, the flags, how each command shows it in `--help`, and
whether it is a path resolved against the config file's directory. From it:

- the typer parameter of each command that uses it (`typer_parameter`);
- the parsed value of a command-line value (`from_command_line`): a bad one
  is a usage error, exit 2;
- the parsed value of a config value (`from_config`): a bad one is a
  `ConfigError` naming the key, exit 97.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from cloudguard.audit.config import OptionValueError

AUDIT = "audit"
REAP_APPLY = "reap apply"


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
    shown: dict[str, Shown]  # command -> its help text and metavar; the commands using it
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

    @property
    def key(self) -> str:
        """The long option name and the config key: `controller-home`."""
        return self.name.replace("_", "-")

    @property
    def flag(self) -> str:
        """How errors name it: the long flag (`--report`)."""
        return (self.flags or (f"--{self.key}",))[0].split("/")[0]


def option(
    *,
    parse: Callable[[object], Any],
    default: Any,
    help: str = "",
    metavar: str | None = None,
    audit: bool = True,
    apply: Shown | bool = False,
    **details: Any,
) -> Any:
    """A settings field carrying its `Option` declaration (see `declarations`)."""
    shown: dict[str, Shown] = {}
    if audit:
        shown[AUDIT] = Shown(help, metavar)
    if apply is True:
        shown[REAP_APPLY] = Shown(help, metavar)
    elif isinstance(apply, Shown):
        shown[REAP_APPLY] = apply
    # The name is filled in by `declarations`, from the field it is declared on.
    return field(
        default=default,
        metadata={"option": Option(name="", parse=parse, default=default, shown=shown, **details)},
    )


def declarations(settings_class: type) -> tuple[Option, ...]:
    """The `Option` of every field of a settings dataclass, in declaration order."""
    from dataclasses import fields, replace

    return tuple(
        replace(f.metadata["option"], name=f.name) for f in fields(settings_class) if f.metadata
    )


def typer_parameter(declared: Option, command: str) -> inspect.Parameter:
    """The keyword parameter typer reads to build `--<key>` for `command`."""
    value_type: Any = list[str] if declared.many else declared.cli_type  # repeatables: strings
    annotation = Annotated[value_type | None, typer_option(declared, command)]
    return inspect.Parameter(
        declared.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation
    )


def typer_option(declared: Option, command: str) -> Any:
    """The `typer.Option` of `declared` as `command` shows it."""
    shown = declared.shown[command]
    details: dict[str, Any] = {"metavar": shown.metavar, "help": shown.help}
    if declared.panel is not None:
        details["rich_help_panel"] = declared.panel
    if declared.min is not None:
        details["min"] = declared.min
    if not declared.show_default:
        details["show_default"] = False
    return typer.Option(*declared.flags, **details)


def given_on_command_line(value: Any) -> bool:
    """None (and an empty repeatable) is "not given": the config or the default decides."""
    return value is not None and value != [] and value != ()


def from_command_line(declared: Option, value: Any) -> Any:
    """A command-line value, parsed; a bad one is a usage error (2) naming the flag."""
    try:
        if declared.many:
            return tuple(declared.parse(item) for item in value)
        return declared.parse(value)
    except OptionValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=declared.flag) from exc


def from_config(declared: Option, raw: object, base: Path) -> Any:
    """A cloudguard.toml value, parsed and its paths made absolute; OptionValueError if bad."""
    if not declared.many:
        return _resolve(declared, declared.parse(raw), base)
    items = [raw] if isinstance(raw, str) and not declared.list_only else raw
    if not isinstance(items, list):
        raise OptionValueError(f"expected a list, got {type(raw).__name__}")
    return tuple(_resolve(declared, declared.parse(item), base) for item in items)


def _resolve(declared: Option, value: Any, base: Path) -> Any:
    if declared.path and isinstance(value, str) and value != "-":
        return str((base / Path(value).expanduser()).resolve())
    return value

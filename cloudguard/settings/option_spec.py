"""From an option's declaration (cloudguard.cloud.options.Option) to the command line and the file.

Whoever owns an option declares it once (the core in `Settings`, an evidence
source in its module, an adapter in `CloudAdapter.options`); derived here:

- the typer parameter of each command that shows it (`typer_parameter`);
- the parsed value of a command-line value (`from_command_line`): a bad one
  is a usage error, exit 2;
- the parsed value of a config value (`from_config`): a bad one is an
  `OptionValueError`, which the reader of cloudguard.toml names (exit 97).
"""

from __future__ import annotations

import inspect
from dataclasses import field, fields, replace
from pathlib import Path
from typing import Annotated, Any

import typer

from cloudguard.cloud.options import Option, OptionValueError, completions, declare


def option(**declaration: Any) -> Any:
    """A settings field carrying its `Option` (see `declare`; the name is the field's)."""
    return field(default=declaration["default"], metadata={"option": declare("", **declaration)})


def declarations(settings_class: type) -> tuple[Option, ...]:
    """The `Option` of every field of a settings dataclass, in declaration order."""
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
    if declared.complete is not None or hasattr(declared.parse, "choices"):
        details["autocompletion"] = lambda incomplete: [
            value for value in completions(declared) if value.startswith(incomplete)
        ]
    return typer.Option(*declared.flags, **details)


def given_on_command_line(value: Any) -> bool:
    """None (and an empty repeatable) is "not given": the config or the default decides."""
    return value is not None and value != [] and value != ()


def from_command_line(declared: Option, value: Any) -> Any:
    """A command-line value, parsed; a bad one is a usage error (2) naming the flag."""
    try:
        if declared.many:
            return tuple(_checked(declared, declared.parse(item)) for item in value)
        return _checked(declared, declared.parse(value))
    except OptionValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=declared.flag) from exc


def from_config(declared: Option, raw: object, base: Path) -> Any:
    """A cloudguard.toml value, parsed and its paths made absolute; OptionValueError if bad."""
    if not declared.many:
        return _checked(declared, _resolve(declared, declared.parse(raw), base))
    items = [raw] if isinstance(raw, str) and not declared.list_only else raw
    if not isinstance(items, list):
        raise OptionValueError(f"expected a list, got {type(raw).__name__}")
    return tuple(
        _checked(declared, _resolve(declared, declared.parse(item), base)) for item in items
    )


def _checked(declared: Option, value: Any) -> Any:
    """`value`, once its declaration's check (`Option.check`) holds for it."""
    if declared.check is not None and value is not None:
        declared.check(value)
    return value


def _resolve(declared: Option, value: Any, base: Path) -> Any:
    if declared.path and isinstance(value, str) and value != "-":
        return str((base / Path(value).expanduser()).resolve())
    return value

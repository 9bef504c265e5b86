"""The project's switch: the plugin is never off without saying so (issue 36, item 1).

A project turns the plugin on in the configuration file pytest reads
(`cloudguard = true`) and requires it there (`required_plugins =
["cloudguard-ci"]`). Both are the project's word; what the session was
handed besides (`-o cloudguard=false` on the command line, in
PYTEST_ADDOPTS, a CI variable, a developer's shell) is not. So, before the
seal would be made:

- the file requires the plugin (either key) and an override turns it off:
  the session stops with a usage error (pytest's own code, 4, as for a
  missing required plugin), naming the override and the file;
- the file declares the plugin but leaves it off (`cloudguard = false`, or
  only `required_plugins`): one line on stderr says this session is
  unguarded and why.

A project that names the plugin nowhere gets no line: the plugin is
installed in many environments whose projects never asked for it.

The file's own values are read from the file pytest chose, by pytest's own
loader: `getini` answers with the overrides applied and cannot tell them
apart.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass

import pytest

DISTRIBUTION = "cloudguard-ci"  # as required_plugins names it
KEY = "cloudguard"
_TRUE = ("y", "yes", "t", "true", "on", "1")  # pytest's own reading of a bool ini value


@dataclass(frozen=True)
class Declaration:
    """What the configuration file pytest chose says of the plugin, as the file has it."""

    file: str
    enabled: bool | None  # `cloudguard = ...` (None: the key is absent)
    required: bool  # required_plugins names cloudguard-ci

    @property
    def declared(self) -> bool:
        return self.enabled is not None or self.required

    @property
    def requires(self) -> bool:
        return bool(self.enabled) or self.required


def declaration(config: pytest.Config) -> Declaration | None:
    """The chosen file's `cloudguard` and `required_plugins`, overrides not applied."""
    inipath = config.inipath
    if inipath is None:
        return None
    from _pytest.config.findpaths import load_config_dict_from_file

    try:
        values: Mapping[str, object] = load_config_dict_from_file(inipath) or {}
    except Exception:  # pytest read it a moment ago; a file changed since says nothing
        return None
    enabled = values.get(KEY)
    required = _unwrap(values.get("required_plugins"))
    words = required if isinstance(required, list) else str(required or "").split()
    return Declaration(
        file=inipath.name,
        enabled=None if enabled is None else truthy(_unwrap(enabled)),
        required=any(requirement_name(str(word)) == DISTRIBUTION for word in words),
    )


def truthy(value: object) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in _TRUE


def requirement_name(word: str) -> str:
    """`cloudguard-ci>=0.1` -> `cloudguard-ci`: the name pytest compares, as it is written."""
    for at, character in enumerate(word):
        if character in "<>=!~;[ ":
            return word[:at]
    return word


def _unwrap(value: object) -> object:
    return getattr(value, "value", value)  # pytest 9: a ConfigValue


def override(config: pytest.Config) -> tuple[str, str] | None:
    """The `-o cloudguard=...` that holds for the session (the last one, as pytest takes it)
    and where it comes from (pytest's own parser reads each place), if it was given one."""
    given = _overrides(getattr(config, "known_args_namespace", None))
    if not given:
        return None
    holding = f"-o {given[-1]}"
    parse = config._parser.parse_known_args
    # pytest's order: the file's addopts, then PYTEST_ADDOPTS, then the command line.
    places = [
        ("the command line", None),
        ("PYTEST_ADDOPTS", shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))),
        (
            f"addopts in {config.inipath.name if config.inipath else 'the ini file'}",
            [str(word) for word in config.getini("addopts")],
        ),
    ]
    for place, words in places[1:]:
        assert words is not None
        if given[-1] in _overrides(parse(words))[-1:]:
            return place, holding
    return places[0][0], holding


def _overrides(namespace: object) -> list[str]:
    given = getattr(namespace, "override_ini", None) or []
    return [item for item in given if item.split("=", 1)[0].strip() == KEY]


def judge_off(config: pytest.Config) -> None:
    """The plugin is off for this session: say so, or stop where the project requires it.

    Raises pytest.UsageError (exit 4) when the project file requires the plugin and an
    override turns it off.
    """
    declared = declaration(config)
    if declared is None or not declared.declared:
        return
    given = override(config)
    if declared.requires and given is not None:
        source, holding = given
        why = f"{KEY} = true" if declared.enabled else f'required_plugins = ["{DISTRIBUTION}"]'
        raise pytest.UsageError(
            f"cloudguard: {source} turns the plugin off ({holding}), but {declared.file} "
            f"requires it ({why}): this session would run every test unguarded, so it does "
            "not run"
        )
    reason = (
        f"{given[0]} sets {given[1]}"
        if given is not None
        else f"{declared.file} says {KEY} = false"
        if declared.enabled is False
        else f"{declared.file} names {DISTRIBUTION} but does not set {KEY} = true"
    )
    sys.stderr.write(f"cloudguard: off: {reason}: this session's tests run unguarded\n")
    sys.stderr.flush()

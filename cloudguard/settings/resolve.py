"""Settings from where they are given: cloudguard.toml's tables, then the command line.

`resolve` is the one path: defaults, then the `[audit]` (and, for `reap
apply`, `[reap]`) table of the config file (an unknown key or a bad value is
97, naming it), then the command line (a bad value is 2, naming the flag).
Every option is read alike, whoever declares it: the core, an evidence
source, or an installed cloud.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer

from cloudguard import exit_codes, project_file
from cloudguard.cloud.adapter_registry import Clouds
from cloudguard.cloud.options import AUDIT, REAP_APPLY, NeedsTrust, Option, OptionValueError
from cloudguard.settings import config_errors as cfg
from cloudguard.settings.core_options import OPTIONS, Settings, every_option
from cloudguard.settings.option_spec import from_command_line, from_config, given_on_command_line

# `cloudguard history` and `cloudguard ack`: they read where the history lives, no more.
HISTORY = "history"
# Which cloudguard.toml tables each command reads.
SECTIONS = {
    AUDIT: ("audit", "history", "notify"),
    REAP_APPLY: ("audit", "reap", "history"),
    HISTORY: ("history",),
}

_CORE = {o.name for o in OPTIONS}


def resolve(
    command: str, given: Mapping[str, Any], config_path: Path | None, clouds: Clouds
) -> Settings:
    """Defaults, then cloudguard.toml (97 when invalid), then the command line (2 when bad).
    `given`: the command line's values by option name (None: not given)."""
    declared = {o.name: o for o, _ in every_option(clouds)}
    config_file, values, reported = read_config_noting(command, config_path, clouds)
    on_command_line = {
        name: from_command_line(declared[name], value)
        for name, value in given.items()
        if given_on_command_line(value)
    }
    values.update(on_command_line)
    core = {name: value for name, value in values.items() if name in _CORE}
    extra = {
        name: values.get(name, option.default)
        for name, option in declared.items()
        if name not in _CORE
    }
    return Settings(
        **core,
        extra=extra,
        given=frozenset(on_command_line),
        config_file=config_file,
        # What the command line set is the operator's, not the file's.
        untrusted_keys=tuple(
            key for key, option in reported.items() if option.name not in on_command_line
        ),
        command=command,
        clouds=clouds,
    )


def read_config(
    command: str, explicit: Path | None, clouds: Clouds | None
) -> tuple[Path | None, dict[str, Any]]:
    """The file read (None: none found) and the validated tables `command` reads from it."""
    path, values, _ = read_config_noting(command, explicit, clouds)
    return path, values


def read_config_noting(
    command: str, explicit: Path | None, clouds: Clouds | None
) -> tuple[Path | None, dict[str, Any], dict[str, Option]]:
    """The file read (None: none found), the validated tables `command` reads from it, and
    the keys of it that apply though it is not trusted (`audit.grace` -> its option):
    `explicit` (`--config`, the caller's own file), or the nearest cloudguard.toml.

    A discovered file the operator has not trusted (cloudguard.trust_store) sets no key
    that needs trust: a key whose absence would change the result is refused (97
    naming `cloudguard trust`), one without which cloudguard is only stricter is
    ignored, and said so; one that describes the fleet (and so can hide a finding)
    applies, and is returned for the report head and the plan to name."""
    label = command.split()[0]
    try:
        path = explicit if explicit is not None else cfg.find_config(Path.cwd())
        if path is None:
            return None, {}, {}
        try:
            document = project_file.read_project_file(
                path, discovered=explicit is None, own=explicit is not None
            )
        except project_file.ProjectFileError as exc:
            raise cfg.ConfigError(str(exc.path), exc.message) from exc
        values: dict[str, Any] = {}
        for section in SECTIONS[command]:
            values.update(section_values(document, section, clouds))
        ignored, reported = _untrusted(document, SECTIONS[command], clouds)
        for option in ignored:
            del values[option.name]
        if reported:
            typer.echo(
                f"cloudguard {label}: {document.path} is not trusted and sets "
                f"{', '.join(reported)}: they apply{_named_where(command)} "
                f"(review it, then `cloudguard trust {document.path}`)",
                err=True,
            )
        return path, values, reported
    except cfg.ConfigError as exc:
        typer.echo(f"cloudguard {label}: invalid config: {exc}", err=True)
        raise typer.Exit(exit_codes.REFUSED_ADMISSION) from exc
    except UntrustedKeys as exc:
        typer.echo(f"cloudguard {label}: refused: {exc}", err=True)
        raise typer.Exit(exit_codes.REFUSED_ADMISSION) from exc


def _named_where(command: str) -> str:
    return ", and the report and the plan name them" if command == AUDIT else ""


# An evidence source's location (a controller home, a state file, a list of owned ids)
# vouches for resources: what it claims turns an orphan into an owned resource.
VOUCHES = NeedsTrust("vouches for resources: what it claims is owned is no orphan", reported=True)


def needs_trust(option: Option) -> NeedsTrust | None:
    """What a discovered file's setting of `option` needs: its owner's declaration, or, for
    an evidence location declaring none, `VOUCHES`."""
    if option.trust is None and option.locates:
        return VOUCHES
    return option.trust


class UntrustedKeys(Exception):
    """A discovered file sets keys that need the operator's trust, which it does not have."""


def _untrusted(
    document: project_file.ProjectDocument, sections: tuple[str, ...], clouds: Clouds | None
) -> tuple[list[Option], dict[str, Option]]:
    """The options of `document` to ignore, and those that apply but must be named (by
    key); UntrustedKeys when one must be refused instead."""
    known = {(o.section, o.key): o for o, _ in every_option(clouds) if needs_trust(o)}
    needing = {
        f"{section}.{key}": known[section, key]
        for section in sections
        for key in document.section(section)
        if (section, key) in known
    }
    try:
        if not needing or document.trusted:
            return [], {}
    except project_file.ProjectFileError as exc:
        raise cfg.ConfigError(str(exc.path), exc.message) from exc
    why = {key: need for key, option in needing.items() if (need := needs_trust(option))}
    refused = {key: need for key, need in why.items() if not (need.ignored or need.reported)}
    if refused:
        message = project_file.untrusted_message(document.path, refused)
        raise UntrustedKeys(f"{document.path}: {message}")
    ignored = []
    for key, need in why.items():
        if need.ignored:
            message = project_file.untrusted_message(document.path, {key: need})
            typer.echo(f"cloudguard: {document.path}: ignored {key}: {message}", err=True)
            ignored.append(needing[key])
    reported = {key: needing[key] for key, need in why.items() if need.reported}
    return ignored, reported


def section_values(
    document: project_file.ProjectDocument, section: str, clouds: Clouds | None = None
) -> dict[str, Any]:
    """One table's values by option name; a bad key or value is a ConfigError naming it.
    `clouds`: whose own options are keys too (default: the installed)."""
    try:
        table = document.section(section)
    except project_file.ProjectFileError as exc:
        raise cfg.ConfigError(str(exc.path), exc.message) from exc
    known = {o.key: o for o, _ in every_option(clouds) if o.section == section}
    values: dict[str, Any] = {}
    for key, raw in table.items():
        where = f"{document.path}: {section}.{key}"
        declared = known.get(key)
        if declared is None:
            raise cfg.ConfigError(where, cfg.unknown_key(key, known))
        try:
            values[declared.name] = from_config(declared, raw, document.path.parent)
        except OptionValueError as exc:
            raise cfg.ConfigError(where, str(exc)) from exc
    return values
